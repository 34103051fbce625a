"""Reads beside a fixed one that still go through the wrapper.

Unwrapping ``self.model.generation_config`` on one line while ``self.model.generate_batch(...)``
three lines down still calls through the wrapper repairs one line and leaves its neighbour: the
fix is safe only when no other member of the same receiver in the function is one a wrapper may
hide. A member is safe through a wrapper when the wrapper is itself an ``nn.Module`` that has it
(``parameters``, ``train``, ``state_dict``, calling the model); a member this rule reports is
fixed in the same run; anything else (a method the model class defines, ``generate_batch``,
``estimate_mfu``) is a neighbour the fix leaves broken.
"""

from __future__ import annotations


import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names
from dataclasses import dataclass
from trllint.semantic.model import SemanticModel

# What a wrapper (DDP, FSDP, a DeepSpeed engine: all nn.Modules) answers itself.
MODULE_MEMBERS = frozenset(
    {
        "forward", "__call__", "training", "train", "eval", "parameters", "named_parameters", "buffers",
        "named_buffers", "children", "named_children", "modules", "named_modules", "state_dict",
        "load_state_dict", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "type", "zero_grad",
        "requires_grad_", "apply", "register_buffer", "register_parameter", "register_forward_hook",
        "register_forward_pre_hook", "register_full_backward_hook", "register_module", "add_module",
        "get_submodule", "get_parameter", "get_buffer", "extra_repr", "module", "no_sync", "join",
        "device", "dtype", "backward", "step", "_modules", "_parameters", "__class__", "__dict__",
    }
)


def neighbour_through_wrapper(model: SemanticModel, read: cst.Attribute, receiver: str, reported: frozenset[str]) -> cst.Attribute | None:
    """Another read of ``receiver.<member>`` in the function holding ``read``, of the same binding
    of ``receiver`` (no assignment to it in between), that a wrapper may hide and that this rule
    does not fix (``reported``: the members it reports), or None."""
    function = model.context.enclosing_function(read)
    if function is None:
        return None
    events = model.once((neighbour_through_wrapper, id(function), reported), lambda: _events(model, function, reported))
    position = next((i for i, event in enumerate(events) if event.node is read), None)
    if position is None:
        return None
    mine = [i for i, event in enumerate(events) if event.name == receiver]
    start = max((i for i in mine if i < position and events[i].kind == BIND), default=-1)
    end = min((i for i in mine if i > position and events[i].kind == BIND), default=len(events))
    return next((events[i].node for i in mine if start < i < end and events[i].kind == HIDDEN), None)


BIND, HIDDEN, REPORTED = "bind", "hidden", "reported"


@dataclass(frozen=True)
class _Event:
    name: str  # the receiver read, or the name assigned
    kind: str  # BIND, HIDDEN (a member a wrapper may hide), REPORTED (a member this rule fixes)
    node: cst.Attribute | None = None


def _events(model: SemanticModel, function: cst.FunctionDef, reported: frozenset[str]) -> list[_Event]:
    """The function's member reads and assignments in source order: read once per function."""
    code_for = model.source.module.code_for_node
    events: list[_Event] = []

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            member = node.attr.value
            if member in MODULE_MEMBERS or member.startswith("__") or not isinstance(node.value, (cst.Name, cst.Attribute)):
                return
            events.append(_Event(code_for(node.value), REPORTED if member in reported else HIDDEN, node))

        def leave_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                events.extend(_Event(name, BIND) for name in assigned_names(target.target))

    walk.visit(function, Reads())
    return events
