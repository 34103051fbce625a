"""Models the code itself unwraps in one place and reads through in another (TRL001's fact).

``self.accelerator.unwrap_model(self.model)`` (an ``unwrap_model`` method) says, by the code's own
account, that the name may hold a wrapper there. A read
of a member no DDP wrapper forwards (``self.model.max_seq``, ``self.model.set_attn_processor(...)``)
on the same name elsewhere in the same scope then fails under DDP. The scope is the function for a
parameter the function never rebinds, and the class's methods (``__init__`` aside, which runs
before any wrap) for a ``self`` attribute the method reading it does not bind. Which wrapper, and
whether a launch runs several processes, the code does not show: the rule asks the launch.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, argument, assigned_names, dotted_name, last_attribute, parameter_names
from trllint.core.prefilter import Calls
from trllint.semantic.context import methods_of
from trllint.semantic.model import SemanticModel

_UNWRAP = "unwrap_model"
# What a file that unwraps a model spells, and the name its code calls for it (the prefilter's).
UNWRAP_MARKERS = (_UNWRAP,)
UNWRAPS_IN_CODE = (Calls(_UNWRAP),)
_NODES = frozenset({cst.Attribute, cst.Call, cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.With})


@dataclass(frozen=True)
class Unwrapped:
    """Where the code takes the model a name holds out of its wrapper."""

    receiver: str  # ``model``, ``self.model``
    node: cst.CSTNode  # the unwrap call


def unwrapped_elsewhere(model: SemanticModel) -> list[tuple[cst.Attribute, Unwrapped]]:
    """Each read of a member on a name that the code unwraps elsewhere in the read's scope, with
    the unwrap; every member is listed (which ones the wrapper answers is the rule's call)."""
    return model.once((unwrapped_elsewhere,), lambda: _compute(model))


def _compute(model: SemanticModel) -> list[tuple[cst.Attribute, Unwrapped]]:
    found: list[tuple[cst.Attribute, Unwrapped]] = []
    for statement in model.source.module.body:
        if isinstance(statement, cst.FunctionDef):
            found.extend(_in_function(statement, {}))
        elif isinstance(statement, cst.ClassDef) and not _keeps_its_model_bare(statement, model.imports):
            methods = [m for m in methods_of(statement).values()]
            attributes: dict[str, Unwrapped] = {}
            for method in methods:
                for receiver, unwrap in _unwraps(method).items():
                    if receiver.startswith("self.") and receiver.count(".") == 1:
                        attributes.setdefault(receiver, unwrap)
            for method in methods:
                found.extend(_in_function(method, {} if method.name.value == "__init__" else attributes))
    return found


def _keeps_its_model_bare(cls: cst.ClassDef, imports: ImportMap) -> bool:
    """transformers' ``Trainer``, or a class built on it or on TRL's: it keeps ``self.model`` bare
    (``self.model_wrapped`` is the wrapper), so its unwraps of ``self.model`` are defensive."""
    if cls.name.value == "Trainer":
        return True
    for base in cls.bases:
        spelled = dotted_name(base.value) or ""
        full = imports.resolve(spelled) or spelled
        if full.split(".", 1)[0] in ("transformers", "trl") or last_attribute(full) in ("Trainer", "Seq2SeqTrainer"):
            return True
    return False


def _in_function(function: cst.FunctionDef, attributes: dict[str, Unwrapped]) -> list[tuple[cst.Attribute, Unwrapped]]:
    """The reads in ``function`` through a name unwrapped in it (a parameter it never rebinds) or,
    for ``self`` attributes it does not bind, in its class."""
    bound = _bound_names(function)
    parameters = set(parameter_names(function.params))
    unwraps = {r: u for r, u in _unwraps(function).items() if r in parameters and r not in bound}
    unwraps.update((r, u) for r, u in attributes.items() if r not in bound)
    if not unwraps:
        return []
    found = []
    for read in walk.of_types(function, frozenset({cst.Attribute})):
        receiver = dotted_name(read.value)
        unwrap = unwraps.get(receiver) if receiver is not None else None
        if unwrap is not None and read.attr.value != "module":
            found.append((read, unwrap))
    return found


def _unwraps(function: cst.FunctionDef) -> dict[str, Unwrapped]:
    """The names ``function`` hands to an accelerator's ``unwrap_model`` method
    (``accelerator.unwrap_model(m)``, ``self.accelerator.unwrap_model(m)``, or a class's own
    ``self.unwrap_model(m)``). Not a library's ``unwrap_model(m)`` function, which projects call
    on whatever they hold, wrapped or not (transformers' Trainer, Ultralytics, Megatron); nor a
    read of ``x.module``: a source file, a spec and a syntax tree have a ``module`` too."""
    found: dict[str, Unwrapped] = {}
    for node in walk.of_types(function, frozenset({cst.Call})):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        handed = argument(node, "model", 0) if name == _UNWRAP else None
        receiver = dotted_name(handed.value) if handed is not None else None
        if receiver is None or receiver in ("self", "cls"):
            continue
        if receiver.count(".") == 0 or (receiver.startswith("self.") and receiver.count(".") == 1):
            found.setdefault(receiver, Unwrapped(receiver, node))
    return found


def _bound_names(function: cst.FunctionDef) -> set[str]:
    """The names (``x``, ``self.x``) ``function`` binds anywhere in its body."""
    names: set[str] = set()
    for node in walk.of_types(function, _NODES):
        if isinstance(node, cst.AssignTarget):
            names.update(assigned_names(node.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            names.update(assigned_names(node.target))
        elif isinstance(node, cst.For):
            names.update(assigned_names(node.target))
        elif isinstance(node, cst.With):
            for item in node.items:
                if item.asname is not None:
                    names.update(assigned_names(item.asname.name))
    return names
