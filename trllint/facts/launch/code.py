"""What a file's own code says about the launches it supports, read from LibCST's tree.

- It builds one: ``Accelerator(deepspeed_plugin=...)`` / ``fsdp_plugin=...``, ``DeepSpeedPlugin(
  zero_stage=3)``, ``FullyShardedDataParallelPlugin(...)``, ``deepspeed.initialize(...)``,
  ``TrainingArguments(deepspeed=..., fsdp=...)`` (any ``*Arguments`` / ``*Config``), a bare
  ``FullyShardedDataParallel(...)`` / ``DistributedDataParallel(...)`` wrap.
- It handles one: ``accelerator.distributed_type == DistributedType.DEEPSPEED``,
  ``is_deepspeed_zero3_enabled()``, ``self.is_fsdp_enabled``, ``accelerator.state.deepspeed_plugin``:
  code that handles DeepSpeed says DeepSpeed is a launch it supports (the diffusers examples'
  ``save_state`` hang was fixed by such a test).
- Lightning's strategies: ``Fabric(strategy="ddp")``, ``Trainer(strategy="deepspeed_stage_3")``,
  ``FSDPStrategy(...)``, ``DDPStrategy(...)``, ``DeepSpeedStrategy(stage=3)``: a Fabric or a
  Lightning Trainer so built launches its processes itself (TinyLlama's pretraining builds
  ``FSDPStrategy`` when it runs on several devices).
- ``notebook_launcher(fn, num_processes=N)`` starts ``fn`` in N processes (None: one per GPU).
- It rules one out: ``accelerator.prepare(model, discriminator, ...)`` with two models in one call,
  run on every path of its function (not under an ``if``, a loop or a ``try``), which accelerate
  refuses under DeepSpeed ("You can't use same `Accelerator()` instance with multiple models when
  using DeepSpeed"): the file never runs under DeepSpeed. An argument counts as a model only where
  the file treats that name as one (``.parameters()``, ``.named_parameters()``, ``.train()``,
  ``.eval()``, ``.requires_grad_()``, ``accelerator.unwrap_model(name)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import dotted_name
from trllint.facts.launch.backends import BACKEND_FLAGS, DEEPSPEED, DISTRIBUTED_TYPE_BACKENDS, Backend, deepspeed_stage, describe

# (A DeepSpeedPlugin(...) call says its stage itself: its name alone would add either stage.)
# Beyond the backend flags (backends.BACKEND_FLAGS): names only code that handles a backend reads.
_DEEPSPEED_NAMES = ("deepspeed_plugin", "HfDeepSpeedConfig")
_FSDP_NAMES = ("fsdp_plugin", "FullyShardedDataParallelPlugin", "is_fsdp2")
_ZERO3_NAMES = ("is_zero3", "zero3_init_flag")
_FSDP_WRAPS = ("FullyShardedDataParallel", "FSDP", "fully_shard")
_DDP_WRAPS = ("DistributedDataParallel", "DDP")
_ARGUMENT_CLASSES = ("Arguments", "Config")
# Lightning's strategy classes, and the callables that take a strategy by name.
_LIGHTNING_STRATEGIES = {"DDPStrategy": frozenset({Backend.DDP}), "FSDPStrategy": frozenset({Backend.FSDP})}
_LIGHTNING_LAUNCHERS = ("Fabric", "Trainer")


@dataclass
class CodeLaunch:
    """The backends the file's code builds or handles, each with the lines that say so."""

    # backends one line allows (a test of DeepSpeed allows either stage) -> the lines that say so
    facts: dict[frozenset[Backend], list[tuple[int, str]]] = field(default_factory=dict)
    # notebook_launcher(fn, ...): the function's name -> (processes: None = one per GPU, line)
    launched: dict[str, tuple[int | None, int]] = field(default_factory=dict)
    # backends the code cannot run under -> the line that says so, and why
    excluded: dict[frozenset[Backend], tuple[int, str]] = field(default_factory=dict)

    def add(self, backends: frozenset[Backend], line: int, said: str) -> None:
        lines = self.facts.setdefault(backends, [])
        if len(lines) < 3:  # a few lines are evidence enough
            lines.append((line, said))


LineOf = Callable[[cst.CSTNode], int]  # the 1-based line a node starts on


def code_launch(module: cst.Module, line_of: LineOf) -> CodeLaunch:
    found = CodeLaunch()
    reader = _Reader(found, line_of)
    walk.visit(module, reader)
    _two_models_in_one_prepare([module, *reader.bodies], reader.modules, found, line_of)
    return found


class _Reader(cst.CSTVisitor):
    """The calls, attributes and names the code reads, in the order the walk meets them. A name
    counts where it is an expression: not a definition's, a parameter's or a keyword's name, not
    an attribute's own name (the attribute is read whole), nothing in an import statement."""

    def __init__(self, found: CodeLaunch, line_of: LineOf) -> None:
        super().__init__()
        self.found = found
        self.line_of = line_of
        self.modules: set[str] = set()  # the names the file treats as models (see the docstring)
        self.bodies: list[cst.CSTNode] = []  # each function's body, in walk order
        self._not_read: set[int] = set()  # ids of the Name nodes that are no expression

    def _skip(self, *names: cst.CSTNode | None) -> None:
        self._not_read.update(id(name) for name in names if isinstance(name, cst.Name))

    def visit_Call(self, node: cst.Call) -> None:
        _call(node, self.found, self.line_of)
        _module_evidence(node, self.modules)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip(node.attr)
        if node.attr.value in _ATTRIBUTES_READ:
            _attribute(node, self.found, self.line_of)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in _NAMES_READ and id(node) not in self._not_read:
            _name(node.value, self.line_of(node), self.found)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skip(node.name)
        self.bodies.append(node.body)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._skip(node.name)

    def visit_Param(self, node: cst.Param) -> None:
        self._skip(node.name)

    def visit_Arg(self, node: cst.Arg) -> None:
        self._skip(node.keyword)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._skip(node.name.name)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        self._skip(node.name)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        self._skip(node.name)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        self._skip(node.rest)

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> None:
        self._skip(node.key)

    def visit_TypeVar(self, node: cst.TypeVar) -> None:
        self._skip(node.name)

    def visit_TypeVarTuple(self, node: cst.TypeVarTuple) -> None:
        self._skip(node.name)

    def visit_ParamSpec(self, node: cst.ParamSpec) -> None:
        self._skip(node.name)

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        return False


# The names `_name` acts on, and the attributes `_attribute` does: most of a file's names and
# attributes are none of them, and are passed over without a call.
_NAMES_READ = frozenset({*BACKEND_FLAGS, *_ZERO3_NAMES, *_DEEPSPEED_NAMES, *_FSDP_NAMES})
_ATTRIBUTES_READ = _NAMES_READ | frozenset(DISTRIBUTED_TYPE_BACKENDS)


# Methods an nn.Module has and nothing else `accelerator.prepare` takes (optimizers, schedulers,
# data loaders) does.
_MODULE_METHODS = ("parameters", "named_parameters", "train", "eval", "requires_grad_")


def _positional(call: cst.Call) -> list[cst.BaseExpression | None]:
    """The call's positional arguments, None for a ``*spread`` one (it names no single value)."""
    return [None if arg.star else arg.value for arg in call.args if arg.keyword is None and arg.star != "**"]


def _module_evidence(call: cst.Call, modules: set[str]) -> None:
    if not isinstance(call.func, cst.Attribute):
        return
    method = call.func.attr.value
    positional = _positional(call)
    if method in _MODULE_METHODS:
        name = dotted_name(call.func.value)
    elif method == "unwrap_model" and positional:
        name = dotted_name(positional[0])
    else:
        return
    if name:
        modules.add(name)


def _run_statements(body: cst.CSTNode) -> list[cst.BaseSmallStatement]:
    """The simple statements of a module's or a function's body that every run of it reaches
    (not those under an ``if``, a loop or a ``try``)."""
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    lines = body.body if isinstance(body, (cst.Module, cst.IndentedBlock)) else ()
    return [small for line in lines if isinstance(line, cst.SimpleStatementLine) for small in line.body]


def _two_models_in_one_prepare(bodies: list[cst.CSTNode], modules: set[str], found: CodeLaunch, line_of: LineOf) -> None:
    for statement in (small for body in bodies for small in _run_statements(body)):
        value = statement.value if isinstance(statement, (cst.Assign, cst.Expr)) else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "prepare"):
            continue
        models = [name for name in (dotted_name(arg) if arg is not None else None for arg in _positional(value)) if name in modules]
        if len(models) > 1 and DEEPSPEED not in found.excluded:
            found.excluded[DEEPSPEED] = (
                line_of(value),
                f"prepare({', '.join(models)}, ...) hands one Accelerator two models, which accelerate "
                "refuses under DeepSpeed",
            )


def _last(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


_NOT_A_CONSTANT = object()
_NAMED_CONSTANTS = {"None": None, "True": True, "False": False}


def _constant(value: cst.BaseExpression | None) -> Any:
    """The value a literal spells (``None``, ``3``, ``"auto"``, ``"a" "b"``), else ``_NOT_A_CONSTANT``."""
    if isinstance(value, cst.Name):
        return _NAMED_CONSTANTS.get(value.value, _NOT_A_CONSTANT)
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
        return value.evaluated_value
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        text = value.evaluated_value
        return _NOT_A_CONSTANT if text is None else text
    if isinstance(value, cst.Ellipsis):
        return ...
    return _NOT_A_CONSTANT


def _absent(value: cst.BaseExpression | None) -> bool:
    return value is None or _constant(value) in (None, False, "", 0)


def _call(call: cst.Call, found: CodeLaunch, line_of: LineOf) -> None:
    name = _last(call.func)
    if name == "Accelerator":
        plugin = _keyword(call, "deepspeed_plugin")
        # `deepspeed_plugin=DeepSpeedPlugin(zero_stage=2)`: the plugin's own call says the stage.
        if not _absent(plugin) and not (isinstance(plugin, cst.Call) and _last(plugin.func) == "DeepSpeedPlugin"):
            found.add(DEEPSPEED, line_of(call), "Accelerator(deepspeed_plugin=...) builds a DeepSpeed launch")
        if not _absent(_keyword(call, "fsdp_plugin")):
            found.add(frozenset({Backend.FSDP}), line_of(call), "Accelerator(fsdp_plugin=...) builds an FSDP launch")
    elif name == "DeepSpeedPlugin":
        stage = _constant(_keyword(call, "zero_stage"))
        backends = DEEPSPEED if stage is _NOT_A_CONSTANT else deepspeed_stage(stage)
        found.add(backends, line_of(call), "DeepSpeedPlugin(...) builds a DeepSpeed launch")
    elif name == "initialize" and isinstance(call.func, cst.Attribute) and _last(call.func.value) in ("deepspeed", "ds"):
        found.add(DEEPSPEED, line_of(call), "deepspeed.initialize(...) runs under DeepSpeed")
    elif name in _FSDP_WRAPS:
        found.add(frozenset({Backend.FSDP}), line_of(call), f"{name}(...) shards the model with FSDP")
    elif name in _DDP_WRAPS:
        found.add(frozenset({Backend.DDP}), line_of(call), f"{name}(...) wraps the model in DDP")
    elif name in _LIGHTNING_STRATEGIES:
        backends = _LIGHTNING_STRATEGIES[name]
        found.add(backends, line_of(call), f"{name}(...) builds a Lightning {describe(backends)} launch")
    elif name == "DeepSpeedStrategy":
        given = _keyword(call, "stage")
        # Lightning's default stage is 2, unless a `config=` names its own; a stage the code does
        # not spell is either (deepspeed_stage).
        if given is None and not _absent(_keyword(call, "config")):
            backends = DEEPSPEED
        else:
            backends = deepspeed_stage(2 if given is None else _constant(given))
        found.add(backends, line_of(call), "DeepSpeedStrategy(...) builds a Lightning DeepSpeed launch")
    elif name in _LIGHTNING_LAUNCHERS:
        strategy = _constant(_keyword(call, "strategy"))
        backends = _lightning_strategy_backends(strategy.lower()) if isinstance(strategy, str) else frozenset()
        if backends:
            found.add(backends, line_of(call), f'{name}(strategy="{strategy}") launches {describe(backends)}')
    elif name == "notebook_launcher" and _positional(call):
        positional = _positional(call)
        target = positional[0]
        processes = _keyword(call, "num_processes")
        if processes is None and len(positional) > 2:
            processes = positional[2]
        count = _constant(processes)
        if isinstance(target, cst.Name):
            found.launched[target.value] = (count if isinstance(count, int) else None, line_of(call))
    elif name.endswith(_ARGUMENT_CLASSES):
        if not _absent(_keyword(call, "deepspeed")):
            found.add(DEEPSPEED, line_of(call), f"{name}(deepspeed=...) trains under DeepSpeed")
        if not _absent(_keyword(call, "fsdp")):
            found.add(frozenset({Backend.FSDP}), line_of(call), f"{name}(fsdp=...) trains under FSDP")


def _lightning_strategy_backends(strategy: str) -> frozenset[Backend]:
    """The backends a Lightning strategy named by its registry name runs (``ddp``, ``ddp_spawn``,
    ``fsdp``, ``deepspeed_stage_3_offload``); empty for one process or DataParallel (``dp``,
    ``auto``, ``single_device``)."""
    if strategy.startswith("ddp"):
        return frozenset({Backend.DDP})
    if strategy.startswith("fsdp"):
        return frozenset({Backend.FSDP})
    if strategy.startswith("deepspeed"):
        # `deepspeed` is Lightning's stage 2; `deepspeed_stage_3_offload` names its stage.
        return deepspeed_stage(strategy.removeprefix("deepspeed").removeprefix("_stage_")[:1] or 2)
    return frozenset()


def _attribute(node: cst.Attribute, found: CodeLaunch, line_of: LineOf) -> None:
    attr = node.attr.value
    if _last(node.value) == "DistributedType" and attr in DISTRIBUTED_TYPE_BACKENDS:
        found.add(DISTRIBUTED_TYPE_BACKENDS[attr], line_of(node), f"the code tests DistributedType.{attr}")
    else:
        _name(attr, line_of(node), found)


def _name(name: str, line: int, found: CodeLaunch) -> None:
    if name in BACKEND_FLAGS:
        found.add(BACKEND_FLAGS[name], line, f"the code handles {describe(BACKEND_FLAGS[name])} ({name})")
    elif name in _ZERO3_NAMES:
        found.add(frozenset({Backend.ZERO3}), line, f"the code handles DeepSpeed ZeRO-3 ({name})")
    elif name in _DEEPSPEED_NAMES:
        found.add(DEEPSPEED, line, f"the code handles DeepSpeed ({name})")
    elif name in _FSDP_NAMES:
        found.add(frozenset({Backend.FSDP}), line, f"the code handles FSDP ({name})")
