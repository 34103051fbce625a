"""What a name holds where a node reads it: the expression of the assignment that the node's
statement reads, in the node's function (or the module's top level).

The assignments are the rank flow's (``trllint.facts.rank_flow``): simple assignments in statement
order, branches in sequence, loop bodies once; after an ``if``/``else`` that assigns the name in
both arms, the arm the flow keeps. A name bound by a loop, a ``with``, a parameter, or as one part
of an unpacked call (``model, loader = accelerator.prepare(model, loader)``) has no expression
here: None, which a rule reads as unknown.
"""

from __future__ import annotations


import libcst as cst

from dataclasses import dataclass
from trllint.facts.rank_flow import rank_flows
from trllint.semantic.model import SemanticModel


@dataclass(frozen=True)
class Bound:
    value: cst.BaseExpression  # what the name was assigned
    statement: cst.CSTNode  # the statement that assigned it (a rank flow's statement line)


def bound_value(model: SemanticModel, name: str, node: cst.CSTNode) -> Bound | None:
    """The expression ``name`` (a dotted name: ``loader``, ``self.sampler``) holds where ``node``
    reads it, or None when no simple assignment of the node's scope says."""
    context = model.context
    scope = context.enclosing_function(node) or model.source.module
    statement = context.enclosing_statement(node)
    try:
        binding = rank_flows(model).flow(scope).binding(name, statement)
    except RecursionError:  # an expression nested too deep to follow: unknown
        return None
    if binding is None or binding.value is None:
        return None
    value, line = binding.value, binding.statement
    if line is None or _unpacked_from(value, line):
        return None
    return Bound(value, line)


def _unpacked_from(value: cst.BaseExpression, line: cst.CSTNode) -> bool:
    """``a, b = f()``: the flow binds each name to the whole call, which is neither's value."""
    for small in getattr(line, "body", ()):
        if isinstance(small, cst.Assign) and small.value is value:
            return any(
                isinstance(t.target, (cst.Tuple, cst.List)) and not isinstance(value, (cst.Tuple, cst.List))
                for t in small.targets
            )
    return False
