"""Which expressions name the module a DeepSpeed engine holds, and which saves write its own
``state_dict()`` (TRL008's facts).

A module an engine holds is spelled ``accelerator.unwrap_model(model)``, ``engine.module`` /
``model.module``, or a name the function bound to one of those; ``x.module if hasattr(x,
"module") else x`` is the engine's module wherever an engine wraps ``x``. Under ZeRO-3 its
``state_dict()`` holds each parameter's empty placeholder: ``torch.save(m.state_dict(), path)``
(or ``accelerator.save``, safetensors' ``save_file``) writes a checkpoint of nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from trllint.facts.bindings import bound_value
from trllint.facts.unwrapping import unwrap_call_of
from trllint.semantic.model import SemanticModel

# Calls whose first argument is written to a file: torch.save, accelerator.save, xm.save,
# safetensors' save_file.
SAVE_FUNCTIONS = frozenset({"save", "save_file"})


@dataclass(frozen=True)
class HeldModule:
    """A module an engine (or accelerate's wrapper) holds, as the code reaches it."""

    unwrap: cst.Call | None  # the accelerator.unwrap_model(...) call, or None for `x.module`


def held_module(model: SemanticModel, receiver: cst.BaseExpression, at: cst.CSTNode) -> HeldModule | None:
    """The module ``receiver`` names where ``at`` reads it, when it is one an engine holds."""
    unwrap = unwrap_call_of(model, receiver, at)
    if unwrap is not None:
        return HeldModule(unwrap)
    if _engine_module(receiver):
        return HeldModule(None)
    if isinstance(receiver, cst.Name):
        bound = bound_value(model, receiver.value, at)
        if bound is not None and isinstance(bound.value, cst.IfExp):
            if _engine_module(bound.value.body) or _engine_module(bound.value.orelse):
                return HeldModule(None)
    return None


def saved_state_dict(model: SemanticModel, save: cst.Call) -> cst.Call | None:
    """The ``m.state_dict()`` call that ``save`` (a ``torch.save``-like call) writes: its first
    argument, or the value of the name it passes, bound in the same function."""
    func = save.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name not in SAVE_FUNCTIONS or not save.args or save.args[0].keyword is not None or save.args[0].star:
        return None
    written = save.args[0].value
    if isinstance(written, cst.Name):
        bound = bound_value(model, written.value, save)
        written = bound.value if bound is not None else written
    if (
        isinstance(written, cst.Call)
        and isinstance(written.func, cst.Attribute)
        and written.func.attr.value == "state_dict"
        and not written.args
    ):
        return written
    return None


def _engine_module(receiver: cst.BaseExpression) -> bool:
    """``engine.module`` / ``model.module``: the model a DeepSpeed engine (or another wrapper) holds."""
    return isinstance(receiver, cst.Attribute) and receiver.attr.value == "module"
