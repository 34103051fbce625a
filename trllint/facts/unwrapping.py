"""The model behind accelerate's wrapper, and where its sharded parameters are whole.

``accelerator.unwrap_model(model)`` returns the module a DeepSpeed engine or FSDP holds: under
ZeRO-3 its parameters are placeholders, gathered only inside a forward (so every rank must run it)
or inside a gathering context (``deepspeed.zero.GatheredParameters``, FSDP's
``summon_full_params``, TRL's ``unwrap_model_for_generation``). TRL007 (a forward run by some
ranks only) and TRL008 (a checkpoint of the placeholders) ask both questions.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import call_name, dotted_name, last_attribute
from trllint.facts.accelerators import is_accelerator
from trllint.semantic.model import SemanticModel

# Context managers inside which the sharded parameters are whole on every rank that entered.
GATHERING_CONTEXTS = ("GatheredParameters", "summon_full_params", "unwrap_model_for_generation")


def is_unwrap_call(model: SemanticModel, node: cst.BaseExpression) -> bool:
    """``<accelerator>.unwrap_model(m, ...)``."""
    if not isinstance(node, cst.Call) or not node.args:
        return False
    func = node.func
    return isinstance(func, cst.Attribute) and func.attr.value == "unwrap_model" and is_accelerator(func.value, model.context)


def unwrap_call_of(model: SemanticModel, receiver: cst.BaseExpression, at: cst.CSTNode) -> cst.Call | None:
    """The ``accelerator.unwrap_model(m)`` call ``receiver`` is: itself, or for a name the one
    value every assignment of it in the scope of ``at`` binds (a name bound to anything else,
    or unpacked, is unknown: None)."""
    if isinstance(receiver, cst.Call):
        return receiver if is_unwrap_call(model, receiver) else None
    if not isinstance(receiver, cst.Name):
        return None
    scope = model.context.enclosing_function(at) or model.source.module
    values = assigned_values(model, scope, receiver.value)
    if not values or any(v is None for v in values):
        return None
    texts = {model.source.module.code_for_node(v) for v in values if v is not None}
    first = values[0]
    if len(texts) == 1 and isinstance(first, cst.Call) and is_unwrap_call(model, first):
        return first
    return None


def params_gathered_at(model: SemanticModel, node: cst.CSTNode) -> bool:
    """``node`` runs inside ``with <a gathering context>(...):`` in its function."""
    child: cst.CSTNode = node
    for ancestor in model.context.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, cst.With) and child is ancestor.body:
            if any(_gathers(item.item) for item in ancestor.items):
                return True
        child = ancestor
    return False


def _gathers(expression: cst.BaseExpression) -> bool:
    name = call_name(expression) if isinstance(expression, cst.Call) else dotted_name(expression)
    return (last_attribute(name) or name or "") in GATHERING_CONTEXTS


def assigned_values(model: SemanticModel, scope: cst.CSTNode, name: str) -> list[cst.BaseExpression | None]:
    """The value of each assignment of ``name`` in ``scope`` (nested functions and classes left
    out); None for a binding whose value is not one expression (unpacking, ``for``, ``with``)."""
    return bindings_in(model, scope).get(name, [])


def bindings_in(model: SemanticModel, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression | None]]:
    """Name -> the value of each of its assignments in ``scope`` (``assigned_values``), one walk
    per scope and file."""
    return model.once((bindings_in, id(scope)), lambda: _bindings(scope))


def _bindings(scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression | None]]:
    values: dict[str, list[cst.BaseExpression | None]] = {}

    def bind(target: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            values.setdefault(target.value, []).append(value)
        else:
            for name in _names_bound(target):
                values.setdefault(name, []).append(None)

    class Assignments(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                bind(target.target, node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                bind(node.target, node.value)

        def visit_For(self, node: cst.For) -> None:
            bind(node.target, None)

        def visit_AsName(self, node: cst.AsName) -> None:
            bind(node.name, None)

    walk.visit(scope, Assignments())
    return values


def _names_bound(target: cst.CSTNode) -> list[str]:
    """The local names an unpacking target binds (``self.x`` and ``d[k]`` bind none)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _names_bound(element.value)]
    if isinstance(target, cst.StarredElement):
        return _names_bound(target.value)
    return []
