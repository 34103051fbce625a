"""What a file's own code says about the launches it supports, read from CPython's tree.

- It builds one: ``Accelerator(deepspeed_plugin=...)`` / ``fsdp_plugin=...``, ``DeepSpeedPlugin(
  zero_stage=3)``, ``FullyShardedDataParallelPlugin(...)``, ``deepspeed.initialize(...)``,
  ``TrainingArguments(deepspeed=..., fsdp=...)`` (any ``*Arguments`` / ``*Config``), a bare
  ``FullyShardedDataParallel(...)`` / ``DistributedDataParallel(...)`` wrap.
- It handles one: ``accelerator.distributed_type == DistributedType.DEEPSPEED``,
  ``is_deepspeed_zero3_enabled()``, ``self.is_fsdp_enabled``, ``accelerator.state.deepspeed_plugin``:
  code that handles DeepSpeed says DeepSpeed is a launch it supports (the diffusers examples'
  ``save_state`` hang was fixed by such a test).
- ``notebook_launcher(fn, num_processes=N)`` starts ``fn`` in N processes (None: one per GPU).
- It rules one out: ``accelerator.prepare(model, discriminator, ...)`` with two models in one call,
  run on every path of its function (not under an ``if``, a loop or a ``try``), which accelerate
  refuses under DeepSpeed ("You can't use same `Accelerator()` instance with multiple models when
  using DeepSpeed"): the file never runs under DeepSpeed. An argument counts as a model only where
  the file treats that name as one (``.parameters()``, ``.named_parameters()``, ``.train()``,
  ``.eval()``, ``.requires_grad_()``, ``accelerator.unwrap_model(name)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from trllint.core.ast_walk import dotted_name, in_walk_order
from trllint.facts.launch.backends import BACKEND_FLAGS, DEEPSPEED, DISTRIBUTED_TYPE_BACKENDS, Backend, deepspeed_stage, describe

# (A DeepSpeedPlugin(...) call says its stage itself: its name alone would add either stage.)
# Beyond the backend flags (backends.BACKEND_FLAGS): names only code that handles a backend reads.
_DEEPSPEED_NAMES = ("deepspeed_plugin", "HfDeepSpeedConfig")
_FSDP_NAMES = ("fsdp_plugin", "FullyShardedDataParallelPlugin", "is_fsdp2")
_ZERO3_NAMES = ("is_zero3", "zero3_init_flag")
_FSDP_WRAPS = ("FullyShardedDataParallel", "FSDP", "fully_shard")
_DDP_WRAPS = ("DistributedDataParallel", "DDP")
_ARGUMENT_CLASSES = ("Arguments", "Config")


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


def code_launch(tree: ast.Module) -> CodeLaunch:
    found = CodeLaunch()
    modules: set[str] = set()  # the names the file treats as models (see the docstring)
    bodies: list[list[ast.stmt]] = [tree.body]  # the module's and each function's, in walk order
    for node in in_walk_order(tree):
        if isinstance(node, ast.Call):
            _call(node, found)
            _module_evidence(node, modules)
        elif isinstance(node, ast.Attribute):
            if node.attr in _ATTRIBUTES_READ:
                _attribute(node, found)
        elif isinstance(node, ast.Name):
            if node.id in _NAMES_READ:
                _name(node.id, node.lineno, found)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bodies.append(node.body)
    _two_models_in_one_prepare(bodies, modules, found)
    return found


# The names `_name` acts on, and the attributes `_attribute` does: most of a file's names and
# attributes are none of them, and are passed over without a call.
_NAMES_READ = frozenset({*BACKEND_FLAGS, *_ZERO3_NAMES, *_DEEPSPEED_NAMES, *_FSDP_NAMES})
_ATTRIBUTES_READ = _NAMES_READ | frozenset(DISTRIBUTED_TYPE_BACKENDS)


# Methods an nn.Module has and nothing else `accelerator.prepare` takes (optimizers, schedulers,
# data loaders) does.
_MODULE_METHODS = ("parameters", "named_parameters", "train", "eval", "requires_grad_")


def _module_evidence(call: ast.Call, modules: set[str]) -> None:
    if not isinstance(call.func, ast.Attribute):
        return
    if call.func.attr in _MODULE_METHODS:
        name = dotted_name(call.func.value)
    elif call.func.attr == "unwrap_model" and call.args:
        name = dotted_name(call.args[0])
    else:
        return
    if name:
        modules.add(name)


def _two_models_in_one_prepare(bodies: list[list[ast.stmt]], modules: set[str], found: CodeLaunch) -> None:
    for body in bodies:
        for statement in body:  # the statements every run of the body reaches
            value = statement.value if isinstance(statement, (ast.Assign, ast.Expr)) else None
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "prepare"):
                continue
            models = [name for name in map(dotted_name, value.args) if name in modules]
            if len(models) > 1 and DEEPSPEED not in found.excluded:
                found.excluded[DEEPSPEED] = (
                    value.lineno,
                    f"prepare({', '.join(models)}, ...) hands one Accelerator two models, which accelerate "
                    "refuses under DeepSpeed",
                )


def _last(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _absent(value: ast.expr | None) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value in (None, False, "", 0))


def _call(call: ast.Call, found: CodeLaunch) -> None:
    name = _last(call.func)
    line = call.lineno
    if name == "Accelerator":
        plugin = _keyword(call, "deepspeed_plugin")
        # `deepspeed_plugin=DeepSpeedPlugin(zero_stage=2)`: the plugin's own call says the stage.
        if not _absent(plugin) and not (isinstance(plugin, ast.Call) and _last(plugin.func) == "DeepSpeedPlugin"):
            found.add(DEEPSPEED, line, "Accelerator(deepspeed_plugin=...) builds a DeepSpeed launch")
        if not _absent(_keyword(call, "fsdp_plugin")):
            found.add(frozenset({Backend.FSDP}), line, "Accelerator(fsdp_plugin=...) builds an FSDP launch")
    elif name == "DeepSpeedPlugin":
        stage = _keyword(call, "zero_stage")
        backends = deepspeed_stage(stage.value) if isinstance(stage, ast.Constant) else DEEPSPEED
        found.add(backends, line, "DeepSpeedPlugin(...) builds a DeepSpeed launch")
    elif name == "initialize" and isinstance(call.func, ast.Attribute) and _last(call.func.value) in ("deepspeed", "ds"):
        found.add(DEEPSPEED, line, "deepspeed.initialize(...) runs under DeepSpeed")
    elif name in _FSDP_WRAPS:
        found.add(frozenset({Backend.FSDP}), line, f"{name}(...) shards the model with FSDP")
    elif name in _DDP_WRAPS:
        found.add(frozenset({Backend.DDP}), line, f"{name}(...) wraps the model in DDP")
    elif name == "notebook_launcher" and call.args:
        target = call.args[0]
        processes = _keyword(call, "num_processes")
        if processes is None and len(call.args) > 2:
            processes = call.args[2]
        count = processes.value if isinstance(processes, ast.Constant) and isinstance(processes.value, int) else None
        if isinstance(target, ast.Name):
            found.launched[target.id] = (count, line)
    elif name.endswith(_ARGUMENT_CLASSES):
        deepspeed = _keyword(call, "deepspeed")
        if not _absent(deepspeed):
            found.add(DEEPSPEED, line, f"{name}(deepspeed=...) trains under DeepSpeed")
        fsdp = _keyword(call, "fsdp")
        if not _absent(fsdp):
            found.add(frozenset({Backend.FSDP}), line, f"{name}(fsdp=...) trains under FSDP")


def _attribute(node: ast.Attribute, found: CodeLaunch) -> None:
    if _last(node.value) == "DistributedType" and node.attr in DISTRIBUTED_TYPE_BACKENDS:
        found.add(DISTRIBUTED_TYPE_BACKENDS[node.attr], node.lineno, f"the code tests DistributedType.{node.attr}")
    else:
        _name(node.attr, node.lineno, found)


def _name(name: str, line: int, found: CodeLaunch) -> None:
    if name in BACKEND_FLAGS:
        found.add(BACKEND_FLAGS[name], line, f"the code handles {describe(BACKEND_FLAGS[name])} ({name})")
    elif name in _ZERO3_NAMES:
        found.add(frozenset({Backend.ZERO3}), line, f"the code handles DeepSpeed ZeRO-3 ({name})")
    elif name in _DEEPSPEED_NAMES:
        found.add(DEEPSPEED, line, f"the code handles DeepSpeed ({name})")
    elif name in _FSDP_NAMES:
        found.add(frozenset({Backend.FSDP}), line, f"the code handles FSDP ({name})")
