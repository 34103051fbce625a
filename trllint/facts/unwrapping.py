"""The model behind accelerate's wrapper, and where its sharded parameters are whole.

``accelerator.unwrap_model(model)`` returns the module a DeepSpeed engine or FSDP holds: under
ZeRO-3 its parameters are placeholders, gathered only inside a forward (so every rank must run it)
or inside a gathering context (``deepspeed.zero.GatheredParameters``, FSDP's
``summon_full_params``, TRL's ``unwrap_model_for_generation``). TRL007 (a forward run by some
ranks only) and TRL008 (a checkpoint of the placeholders) ask both questions.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import call_name, dotted_name, last_attribute
from trllint.facts.accelerators import is_accelerator
from trllint.facts.bindings import bound_value
from trllint.facts.calls import called_names
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
    """The ``accelerator.unwrap_model(m)`` call ``receiver`` is where ``at`` reads it: itself, or
    for a name the value the name holds there (``facts.bindings``; a name bound by a loop, a
    ``with`` or an unpacking is unknown: None)."""
    if isinstance(receiver, cst.Call):
        return receiver if is_unwrap_call(model, receiver) else None
    if not isinstance(receiver, cst.Name) or "unwrap_model" not in called_names(model):
        return None  # a file that unwraps nothing binds no name to an unwrap call
    if not _scope_spells_unwrap(model, at):
        return None  # nor does a function (the flow reads its own bindings) that spells none
    bound = bound_value(model, receiver.value, at)
    if bound is not None and isinstance(bound.value, cst.Call) and is_unwrap_call(model, bound.value):
        return bound.value
    return None


def _scope_spells_unwrap(model: SemanticModel, at: cst.CSTNode) -> bool:
    """The function ``at`` sits in (or the module) holds an ``unwrap_model`` call: a name read
    there is bound to one only by an assignment of its own (``bound_value``). Saves building the
    flow of every function that calls something by name."""
    scope = model.context.enclosing_function(at) or model.source.module
    return id(scope) in _scopes_unwrapping(model)


def _scopes_unwrapping(model: SemanticModel) -> frozenset[int]:
    """The functions (and the module) whose own code holds an ``x.unwrap_model(...)`` call, from
    the file's calls."""

    def compute() -> frozenset[int]:
        found: set[int] = set()
        for call in model.calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "unwrap_model":
                found.add(id(model.context.enclosing_function(call) or model.source.module))
        return frozenset(found)

    return model.once((_scopes_unwrapping,), compute)


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
