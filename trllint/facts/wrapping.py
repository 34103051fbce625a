"""What wraps a model (DataParallel, DDP, FSDP, a DeepSpeed engine, accelerate's ``prepare``), and
which members of a Hugging Face model reading through that wrapper breaks.

A wrapper is an ``nn.Module`` that holds the real model as ``.module``. It forwards calls and
``nn.Module`` members, but not what a Hugging Face model adds on top (``config``, ``generate``,
``save_pretrained``, ...): DataParallel and DistributedDataParallel raise ``AttributeError``;
a DeepSpeed engine forwards unknown attributes yet has a ``config`` of its own, so
``engine.config`` silently returns DeepSpeed's configuration; FSDP (v1) forwards attribute reads
but its parameters are sharded, so ``generate`` and friends do not work through it.

``accelerator.prepare_model(m, evaluation_mode=True)`` wraps nothing (accelerate skips DDP and FSDP
for evaluation), so the name it binds is the model itself.

Which models of a file may be wrapped (bindings followed through its functions and classes) is
TRL001's question: ``trllint.rules.trl001_wrapped_model_attribute.wrapped_models``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, assigned_names, call_name, dotted_name, last_attribute, matches, parameter_names
from trllint.facts.launch.backends import DEEPSPEED as LAUNCH_DEEPSPEED, Backend

# Members a Hugging Face PreTrainedModel has and a wrapper does not forward.
HF_MODEL_MEMBERS = frozenset(
    {
        "config",
        "generation_config",
        # PreTrainedModel's property for the bare backbone (and PeftModel's attribute for the model
        # it adapts): `model.base_model.save_pretrained(...)` through DDP raises (trlx#181).
        "base_model",
        "name_or_path",
        "generate",
        "can_generate",
        "get_input_embeddings",
        "get_output_embeddings",
        "set_input_embeddings",
        "resize_token_embeddings",
        "gradient_checkpointing_enable",
        "gradient_checkpointing_disable",
        "enable_input_require_grads",
        "warnings_issued",
        "save_pretrained",
        "push_to_hub",
        "add_model_tags",
        "main_input_name",
    }
)

# The kinds of wrapping, by what made it.
STEP_ARGUMENT = "step-argument"  # whatever the Trainer wrapped it in: DP, DDP, FSDP or DeepSpeed
ACCELERATE = "accelerate"  # accelerator.prepare: likewise, depending on the launch
DATA_PARALLEL = "data-parallel"  # DataParallel / DistributedDataParallel
FSDP = "fsdp"
DEEPSPEED = "deepspeed"

# FSDP forwards attribute reads to the wrapped module; these still fail on sharded parameters.
_BROKEN_UNDER_FSDP = frozenset({"generate", "resize_token_embeddings", "save_pretrained", "push_to_hub"})
# ... unless handed the whole state dict (`save_pretrained(path, state_dict=full)`): it then
# writes those weights, not the sharded ones it holds.
_WHOLE_WEIGHTS_HANDED = frozenset({"save_pretrained"})
# A DeepSpeed engine forwards what it does not define itself; it defines ``config``.
_SHADOWED_BY_DEEPSPEED = frozenset({"config"})

# Helpers that end in `deepspeed.initialize` and return the engine (TRL's `prepare_deepspeed`, the
# trainers' `_prepare_deepspeed` copies): a DeepSpeed wrapping, whatever the launch.
DEEPSPEED_HELPERS = ("prepare_deepspeed", "_prepare_deepspeed")
# accelerate's methods that return the model they are handed wrapped (maybe sharded).
PREPARE_METHODS = ("prepare", "prepare_model")

# Attributes of transformers' Trainer that hold the wrapped model.
TRAINER_WRAPPED_ATTRIBUTES = ("self.model_wrapped", "self.deepspeed")
# The wrappers a call builds (wrapping_made_by), by their last names.
DATA_PARALLEL_WRAPPERS = ("DataParallel", "DistributedDataParallel")
FSDP_WRAPPER = "FullyShardedDataParallel"


@dataclass(frozen=True)
class Wrapping:
    """Why a model may be wrapped, and what can unwrap it."""

    kind: str
    origin: str  # for messages: "the model argument of training_step", "DistributedDataParallel(...)"
    accelerator: str | None = None  # the accelerator whose prepare() wrapped it
    # Bound inside an if/for/while/try: the model may also be unwrapped at the read.
    conditional: bool = False
    # Members the wrapped object lacks itself (a plain nn.Module of this file): reading them
    # fails unwrapped too, so the wrapper is not what breaks them.
    missing_unwrapped: frozenset[str] = frozenset()
    # The plain nn.Module class of the file the wrapped object is an instance of, when known.
    instance_of: str | None = None
    # The wrapper class a DATA_PARALLEL wrapping made (``DataParallel``, ``DistributedDataParallel``).
    wrapper: str | None = None
    # Made in another module of the project (a helper that returns it, a base class that binds it).
    other_module: bool = False
    # Made by a function of this file that returns the wrapper (``model = wrap_model(model)``).
    local_helper: bool = False
    # Made by a library trainer the class inherits from (TRL's PPOTrainer prepares self.model).
    library_base: bool = False

    def breaks(self, member: str, state_dict_given: bool = False) -> bool:
        """Whether reading ``member`` through this wrapper fails or reads the wrong object;
        ``state_dict_given``: the read is a call handed ``state_dict=``."""
        if member in self.missing_unwrapped:
            return False
        if self.kind == FSDP:
            return _broken_under_fsdp(member, state_dict_given)
        if self.kind == DEEPSPEED:
            return member in _SHADOWED_BY_DEEPSPEED
        return member in HF_MODEL_MEMBERS

    def breaking_backends(self, member: str, state_dict_given: bool = False) -> frozenset[Backend] | None:
        """The backends under which reading ``member`` through this wrapping breaks, for a
        wrapping the launch chooses (accelerate's ``prepare``, the Trainer's step argument);
        None for a wrap the code makes itself (``DistributedDataParallel(...)``), whatever the launch.

        accelerate wraps nothing in one process; the Trainer wraps in ``DataParallel`` there
        when it sees several GPUs."""
        if self.kind not in (ACCELERATE, STEP_ARGUMENT):
            return None
        backends: set[Backend] = set()
        if member in HF_MODEL_MEMBERS and member not in self.missing_unwrapped:
            backends.add(Backend.DDP)
            if self.kind == STEP_ARGUMENT:
                backends.add(Backend.ONE_PROCESS)
        if _broken_under_fsdp(member, state_dict_given):
            backends.add(Backend.FSDP)
        if member in _SHADOWED_BY_DEEPSPEED:
            backends.update(LAUNCH_DEEPSPEED)
        return frozenset(backends)

    @property
    def has_module(self) -> bool:
        """The wrapper is known to hold the model as ``.module`` (a bare wrap, not accelerate's choice)."""
        return self.kind in (DATA_PARALLEL, FSDP, DEEPSPEED)


def wrapping_made_by(value: cst.BaseExpression, imports: ImportMap, accelerators: set[str]) -> list[Wrapping | None] | None:
    """The wrapping each unpacked target of ``target = value`` gets; None if ``value`` wraps nothing.

    A single-element list applies to every target of a plain (non-tuple) assignment.
    """
    subscript_first = False
    if isinstance(value, cst.Subscript) and _is_index(value, 0) and isinstance(value.value, cst.Call):
        value, subscript_first = value.value, True
    if not isinstance(value, cst.Call):
        return None
    name = call_name(value)
    full = imports.resolve(name)
    if matches(full, "deepspeed.initialize") or (full or "").endswith("deepspeed.initialize"):
        engine = Wrapping(DEEPSPEED, "deepspeed.initialize(...)")
        # `engine, optimizer, _, _ = deepspeed.initialize(...)`: only the first is the engine.
        return [engine] if subscript_first else [engine, None, None, None]
    if subscript_first:
        return None
    if matches(full, *DATA_PARALLEL_WRAPPERS):
        wrapper = last_attribute(full)
        return [Wrapping(DATA_PARALLEL, f"{wrapper}(...)", wrapper=wrapper)]
    if matches(full, FSDP_WRAPPER):
        return [Wrapping(FSDP, f"{FSDP_WRAPPER}(...)")]
    method = last_attribute(name)
    if method in DEEPSPEED_HELPERS:
        return [Wrapping(DEEPSPEED, f"{method}(...)")]
    if name and "." in name and method in PREPARE_METHODS:
        receiver = name.rsplit(".", 1)[0]
        if receiver in accelerators or "accelerator" in receiver.rsplit(".", 1)[-1].lower():
            if method == "prepare_model" and _evaluation_mode(value):
                return None  # accelerate wraps nothing for evaluation: the model comes back as is
            return [Wrapping(ACCELERATE, f"{receiver}.{method}(...)", accelerator=receiver)]
    return None


def _evaluation_mode(call: cst.Call) -> bool:
    """``prepare_model(model, device_placement, True)`` or ``evaluation_mode=True``."""
    for index, arg in enumerate(call.args):
        is_it = (arg.keyword is not None and arg.keyword.value == "evaluation_mode") or (
            arg.keyword is None and not arg.star and index == 2
        )
        if is_it:
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


def _is_index(node: cst.Subscript, index: int) -> bool:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    inner = node.slice[0].slice.value
    return isinstance(inner, cst.Integer) and inner.evaluated_value == index


def step_model_parameter(function: cst.FunctionDef) -> str | None:
    """The model parameter of a step method: ``model`` if present, else the first after ``self``."""
    names = parameter_names(function.params)
    if "model" in names:
        return "model"
    return names[1] if len(names) > 1 else None


def _broken_under_fsdp(member: str, state_dict_given: bool) -> bool:
    return member in _BROKEN_UNDER_FSDP and not (state_dict_given and member in _WHOLE_WEIGHTS_HANDED)


def returns_a_wrapper(function: cst.FunctionDef, imports: ImportMap) -> Wrapping | None:
    """The DDP or DataParallel wrapping ``function`` returns (``conditional``: some path returns
    anything else), or None: ``def wrap_model(model): return DistributedDataParallel(model)``."""
    returns = _ReturnedWrappers(function, imports)
    walk.visit(function, returns)
    wrapping = next((r for r in returns.returns if r is not None), None)
    if wrapping is None:
        return None
    conditional = any(r is None for r in returns.returns)
    return Wrapping(DATA_PARALLEL, wrapping.origin, wrapper=wrapping.wrapper, conditional=conditional)


class _ReturnedWrappers(cst.CSTVisitor):
    """The DDP or DataParallel wrapping each ``return`` of one function hands back (None for
    anything else). A class of the module: one made per call would leave a cycle holding the tree."""

    def __init__(self, function: cst.FunctionDef, imports: ImportMap) -> None:
        super().__init__()
        self.function = function
        self.imports = imports
        # Each name's latest binding in source order: its wrapping, and whether a branch made it.
        self.bound: dict[str, tuple[Wrapping | None, bool]] = {}
        self.returns: list[Wrapping | None] = []
        self.depth = 0

    def made_by(self, value: cst.BaseExpression) -> Wrapping | None:
        made = wrapping_made_by(value, self.imports, set())
        first = made[0] if made is not None and len(made) == 1 else None
        return first if first is not None and first.kind == DATA_PARALLEL else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function  # a nested def returns for itself

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_If(self, node: cst.If) -> None:
        self.depth += 1

    def leave_If(self, original_node: cst.If) -> None:
        self.depth -= 1

    def visit_Try(self, node: cst.Try) -> None:
        self.depth += 1

    def leave_Try(self, original_node: cst.Try) -> None:
        self.depth -= 1

    def leave_Assign(self, original_node: cst.Assign) -> None:
        wrapping = self.made_by(original_node.value)
        for target in original_node.targets:
            for name in assigned_names(target.target):
                self.bound[name] = (wrapping, self.depth > 0)

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if isinstance(value, cst.Call):
            self.returns.append(self.made_by(value))
            return
        wrapping, branched = self.bound.get(dotted_name(value) or "", (None, False)) if value is not None else (None, False)
        if wrapping is not None and branched:
            self.returns.append(None)  # the branch may have left the name bare
        self.returns.append(wrapping)
