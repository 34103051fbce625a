"""Which calls are collectives: operations every rank of the job must enter, in the same order.

accelerate's ``Accelerator`` methods and ``accelerate.utils`` functions, ``torch.distributed``
(and ``deepspeed.comm``, the same API), a DTensor's ``full_tensor()`` (FSDP2's parameters), a
DeepSpeed engine's ``save_checkpoint`` and the Trainer's ``save_model`` (collective under
DeepSpeed and FSDP: it gathers the shards).

How a hoisted copy behaves on the ranks that skipped the call until now decides its fix:
``safe`` where the call returns a new value or only synchronises, and writes files from the main
process only; ``unsafe`` where every rank writes its own files; no fix where the call changes
its tensor arguments in place (``all_reduce``, ``broadcast``), which other ranks may read later.
"""

from __future__ import annotations

import re
from typing import Literal

import libcst as cst

from dataclasses import dataclass
from trllint.facts.accelerators import is_accelerator
from trllint.facts.launch.backends import DEEPSPEED, MULTI_PROCESS, SHARDED, Backend, describe
from trllint.facts.module_names import shown_a_module
from trllint.facts.wrapping import PREPARE_METHODS
from trllint.facts.rank_lattice import is_torch_distributed
from trllint.semantic.context import NodeContext, is_trainer_class
from trllint.core.cst.names import argument, call_name, dotted_name, last_attribute
from trllint.semantic.model import SemanticModel, imports_of
from trllint.core.source import SourceFile

Hoist = Literal["safe", "unsafe", "never"]

# Accelerator methods: how a copy hoisted onto every rank behaves.
ACCELERATOR_METHODS: dict[str, Hoist] = {
    "gather": "safe",
    "gather_for_metrics": "safe",
    "reduce": "safe",  # reduces a clone
    "pad_across_processes": "safe",
    "wait_for_everyone": "safe",
    "get_state_dict": "safe",  # collective under ZeRO-3 and FSDP
    "save_model": "safe",  # get_state_dict, then writes from the main process only
    "save_state": "unsafe",  # every rank writes its RNG state and moves its checkpoint counter
    "check_trigger": "never",  # all-reduces the ranks' flags and resets this rank's
    # Wrapping a model: DDP's constructor broadcasts its state, FSDP's and DeepSpeed's shard it.
    # On every rank it would wrap the model again: what the code wants is the prepared one.
    "prepare": "never",
    "prepare_model": "never",
}
# accelerate.utils functions (``from accelerate.utils import gather``).
ACCELERATE_FUNCTIONS: dict[str, Hoist] = {
    "gather": "safe",
    "gather_object": "safe",
    "reduce": "safe",
    "pad_across_processes": "safe",
    "wait_for_everyone": "safe",
    "broadcast": "never",  # in place
    "broadcast_object_list": "never",
}
# torch.distributed collectives and the position of their ``group`` argument: a call on a
# subgroup is entered by the group's members only, so a test on the rank may be the right guard.
TORCH_COLLECTIVES: dict[str, int] = {
    "barrier": 0,
    "monitored_barrier": 0,
    "all_reduce": 2,
    "all_gather": 2,
    "all_gather_into_tensor": 2,
    "all_gather_object": 2,
    "reduce": 3,
    "reduce_scatter": 3,
    "reduce_scatter_tensor": 3,
    "broadcast": 2,
    "broadcast_object_list": 2,
    "scatter": 3,
    "scatter_object_list": 3,
    "gather": 3,
    "gather_object": 3,
    "all_to_all": 2,
    "all_to_all_single": 4,
}
TORCH_BARRIERS = ("barrier", "monitored_barrier")
# Names under which code holds a DeepSpeed engine (the Trainer keeps it as `deepspeed` and `model_wrapped`).
_ENGINE_NAMES = ("deepspeed", "model_wrapped")


# ZeRO-3 gathers each layer's parameters in a DeepSpeed engine's forward.
ENGINE_FORWARD_BACKENDS = frozenset({Backend.ZERO3})
# Calls that are collectives only under some backends (chosen outside the script: `accelerate
# config`, the Trainer's arguments), and which: the launch model says whether the code runs so.
# save_state also enters a barrier under any backend with automatic checkpoint naming.
SHARDED_ONLY: dict[str, frozenset[Backend]] = {
    "get_state_dict": SHARDED,
    "save_model": SHARDED,
    "save_state": DEEPSPEED | {Backend.FSDP},
    "engine_forward": ENGINE_FORWARD_BACKENDS,
    "prepare": MULTI_PROCESS,
    "prepare_model": MULTI_PROCESS,
}
AUTOMATIC_NAMING = "automatic_checkpoint_naming"


@dataclass(frozen=True)
class Collective:
    call: cst.Call
    label: str  # how the message names it: `accelerator.gather_for_metrics`, `dist.barrier`
    kind: str  # what pairs with what (see `_kind`): a "barrier", a "gather", else the method's name
    hoist: Hoist
    # A function of the file that enters collectives ("call:" kinds): the backends under which
    # it enters one (None: under every backend), from the collectives it reaches and its own tests.
    helper_backends: frozenset[Backend] | None = None
    # A function of another module of the project: where it enters the collective (path, line).
    defined_in: tuple[str, int] | None = None

    @property
    def backends(self) -> frozenset[Backend] | None:
        """The backends under which this call is a collective; None: under every backend."""
        return self.helper_backends if self.kind.startswith("call:") else SHARDED_ONLY.get(self.kind)

    @property
    def described(self) -> str:
        """The label, with the configurations under which it is a collective where that matters."""
        under = self.backends
        return f"{self.label} (a collective under {describe(under)})" if under else self.label


# A DTensor's whole value (FSDP2, tensor parallelism): an all-gather of its shards over its mesh.
DTENSOR_GATHER = "full_tensor"
COLLECTIVE_NAMES = frozenset(
    {*ACCELERATOR_METHODS, *ACCELERATE_FUNCTIONS, *TORCH_COLLECTIVES, "save_model", "save_checkpoint", DTENSOR_GATHER}
)


def call_label(call: cst.Call) -> str:
    """How a message names what ``call`` calls: ``accelerator.save_state``, ``save_checkpoint``."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return f"{cst.Module([]).code_for_node(func.value)}.{func.attr.value}"
    return cst.Module([]).code_for_node(func)


def named_like_collective(call: cst.Call) -> bool:
    """The cheap first question: is the called name one a collective may have?"""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name in COLLECTIVE_NAMES


def collective_of(call: cst.Call, context: NodeContext) -> Collective | None:
    """The collective ``call`` enters, or None when it is none (or not known to be one)."""
    if not named_like_collective(call):
        return _engine_forward(call, context)  # each answer below needs a called name in COLLECTIVE_NAMES
    name = call_name(call)
    if name is None:
        return None
    method = last_attribute(name) or ""
    full = imports_of(context.source).resolve(name) or name
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if is_torch_distributed(full) or is_torch_distributed(name):
        if method not in TORCH_COLLECTIVES or argument(call, "group", TORCH_COLLECTIVES[method]) is not None:
            return None
        hoist: Hoist = "safe" if method in TORCH_BARRIERS else "never"
        return Collective(call, name, _kind(method), hoist)
    if full.startswith("accelerate.") and method in ACCELERATE_FUNCTIONS:
        return Collective(call, name, _kind(method), ACCELERATE_FUNCTIONS[method])
    if receiver is None:
        return None
    if method == DTENSOR_GATHER and not call.args:
        return Collective(call, name, DTENSOR_GATHER, "safe")  # returns a new tensor on every rank
    if method in PREPARE_METHODS and is_accelerator(receiver, context):
        return Collective(call, name, method, "never") if _prepares_a_model(call, context) else None
    if method in ACCELERATOR_METHODS and is_accelerator(receiver, context):
        return Collective(call, name, _kind(method), ACCELERATOR_METHODS[method])
    if method == "save_model" and _is_trainer(receiver, call, context):
        return Collective(call, name, "save_model", "safe")  # the Trainer writes from the main process only
    if method == "save_checkpoint" and _is_deepspeed_engine(receiver, context):
        return Collective(call, name, "save_checkpoint", "unsafe")  # every rank writes its shard
    return None


def _prepares_a_model(call: cst.Call, context: NodeContext) -> bool:
    """``accelerator.prepare(model)``: some argument is shown to be a model (loaders, optimizers
    and schedulers are prepared with no collective), and ``prepare_model`` is not told
    ``evaluation_mode=True`` (it then wraps nothing)."""
    mode = argument(call, "evaluation_mode")
    if mode is not None and not (isinstance(mode.value, cst.Name) and mode.value.value == "False"):
        return False
    model = SemanticModel.of(context.source)
    return any(
        name is not None and shown_a_module(model, name)
        for arg in call.args
        if arg.keyword is None and not arg.star
        for name in [dotted_name(arg.value)]
    )


def _engine_forward(call: cst.Call, context: NodeContext) -> Collective | None:
    """A forward (or ``generate``) of an engine ``deepspeed.initialize`` returned: ``engine(batch)``,
    ``engine.forward(...)``, ``engine.module.generate(...)``. Under ZeRO-3 every rank's forward
    gathers each layer's parameters from the others."""
    name = forwarded(call)
    if name is None or name not in engines_from_initialize(context):
        return None
    label = call_name(call) or name
    return Collective(call, f"{label} (a forward of a DeepSpeed engine)", "engine_forward", "never")


def forwarded(call: cst.Call) -> str | None:
    """What ``call`` runs a forward of, when it is one: ``model`` for ``model(batch)``,
    ``model.forward(...)``, ``model.generate(...)`` and ``model.module.generate(...)``."""
    func = call.func
    receiver: cst.BaseExpression = func
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "generate"):
        receiver = func.value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "module":
            receiver = receiver.value
    return dotted_name(receiver)


def _kind(method: str) -> str:
    # Every barrier is a "barrier"; gather_for_metrics is accelerate's gather (one all-gather)
    # followed by dropping the last batch's padding, so it meets a `gather` on the other ranks.
    if method in ("wait_for_everyone", *TORCH_BARRIERS):
        return "barrier"
    return "gather" if method == "gather_for_metrics" else method


def _is_trainer(receiver: cst.BaseExpression, call: cst.Call, context: NodeContext) -> bool:
    name = dotted_name(receiver)
    if name == "self":
        cls = context.enclosing_class(call)
        return cls is not None and is_trainer_class(cls)
    return name is not None and "trainer" in (last_attribute(name) or "").lower()


def _is_deepspeed_engine(receiver: cst.BaseExpression, context: NodeContext) -> bool:
    name = dotted_name(receiver)
    if name is None:
        return False
    last = last_attribute(name) or ""
    return "engine" in last.lower() or last in _ENGINE_NAMES or name in engines_from_initialize(context)


def engines_from_initialize(context: NodeContext) -> frozenset[str]:
    """Names bound to the engine ``deepspeed.initialize`` returns (``engine, opt, _, _ = ...``)."""
    return SemanticModel.of(context.source).once((_engine_names,), lambda: _engine_names(context.source))


def _engine_names(source: SourceFile) -> frozenset[str]:
    model = SemanticModel.of(source)
    imports = model.imports
    names: set[str] = set()
    for node in model.assignments:  # the file's assignments, from the walk every rule shares
        call = node.value
        if not (isinstance(node, cst.Assign) and isinstance(call, cst.Call)):
            continue
        if "initialize" not in (call_name(call) or ""):
            continue
        if (imports.resolve(call_name(call)) or "").endswith("deepspeed.initialize"):
            for target in node.targets:
                first = target.target
                if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
                    first = first.elements[0].value
                name = dotted_name(first)
                if name is not None:
                    names.add(name)
    return frozenset(names)


def names_checkpoints_automatically(source: SourceFile) -> int | None:
    """The line of ``ProjectConfiguration(automatic_checkpoint_naming=True)``, or None: ``save_state``
    then enters a barrier under every backend (it prunes old checkpoints on the main process
    between two)."""
    match = re.search(AUTOMATIC_NAMING + r"\s*=\s*True", source.text)
    return None if match is None else source.text.count("\n", 0, match.start()) + 1
