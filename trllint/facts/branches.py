"""Whether FSDP is known to be off where a node runs.

A node is in FSDP-off code when a branch it sits in was taken on a test that rules FSDP out (the
``else`` of ``if self.is_fsdp_enabled:``, the body of ``if accelerator.distributed_type !=
DistributedType.FSDP:``, the ``else`` of an ``elif`` in TRL's ``if deepspeed / elif fsdp / else``
chains), or when an earlier statement of an enclosing block leaves on FSDP (``if
self.is_fsdp_enabled: return``, ``assert not self.is_fsdp_enabled``).

Only tests whose falsehood proves FSDP off count: the Trainer's ``is_fsdp_enabled`` attribute
(``fsdp_plugin is not None``) and accelerate's ``distributed_type``. transformers' function
``is_fsdp_enabled()`` does not: it is also False under FSDP unless CPU-RAM-efficient loading is on.

Whether every rank reaches a node is ``trllint.facts.rank_split.rank_divergence``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst

from trllint.semantic.context import NodeContext
from trllint.core.cst.names import dotted_name, is_none, read_through

# What a test says about a property (FSDP on, the model bare) when it is true, and when it is
# false: True (it holds), False (it does not) or None (nothing known).
Knowledge = tuple[bool | None, bool | None]
_UNKNOWN: Knowledge = (None, None)

_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def proves(test: cst.BaseExpression, outcome: bool, leaf: Callable[[cst.BaseExpression], Knowledge]) -> bool:
    """True when ``test`` evaluating to ``outcome`` proves a property; ``leaf`` reads what a single
    test (no ``not``/``and``/``or``) says of it: (holds when true, holds when false), each True,
    False or None (nothing known)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return proves(test.expression, not outcome, leaf)
    if isinstance(test, cst.BooleanOperation):
        left = proves(test.left, outcome, leaf)
        right = proves(test.right, outcome, leaf)
        # `a and b` true, or `a or b` false: both operands had that outcome; otherwise either may have.
        both_had_outcome = isinstance(test.operator, cst.And) == outcome
        return (left or right) if both_had_outcome else (left and right)
    when_true, when_false = leaf(test)
    return (when_true if outcome else when_false) is True


def holds_at(node: cst.CSTNode, context: NodeContext, leaf: Callable[[cst.BaseExpression], Knowledge]) -> bool:
    """True when every path that reaches ``node`` in its function passed a test proving the
    property ``leaf`` reads: a branch taken on it (``if``/``else``, a conditional expression,
    the right operand of ``and``/``or``), or an earlier statement of an enclosing block that
    leaves unless it holds (``if <test>: return``, ``assert <test>``). A test outside the
    function says nothing of when the function runs."""
    child: cst.CSTNode = node
    for ancestor in context.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)):
            if child is ancestor.body and proves(ancestor.test, True, leaf):
                return True
            if child is ancestor.orelse and proves(ancestor.test, False, leaf):
                return True
        elif isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
            if proves(ancestor.left, isinstance(ancestor.operator, cst.And), leaf):
                return True
        elif isinstance(ancestor, (cst.IndentedBlock, cst.Module, cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(_leaves_unless(earlier, leaf) for earlier in earlier_siblings(ancestor.body, child)):
                return True
        child = ancestor
    return False


def fsdp_known_off(node: cst.CSTNode, context: NodeContext) -> bool:
    """True when every path that reaches ``node`` has ruled FSDP out."""
    return holds_at(node, context, _fsdp_off)


def rules_out_fsdp(test: cst.BaseExpression, *, outcome: bool) -> bool:
    """True when ``test`` evaluating to ``outcome`` proves FSDP off."""
    return proves(test, outcome, _fsdp_off)


def _fsdp_off(test: cst.BaseExpression) -> Knowledge:
    when_true, when_false = fsdp_knowledge(test)
    return (None if when_true is None else not when_true, None if when_false is None else not when_false)


def fsdp_knowledge(test: cst.BaseExpression) -> Knowledge:
    """What a single test (no ``not``/``and``/``or``) says about FSDP when true and when false."""
    if isinstance(test, (cst.Name, cst.Attribute)) and _last_name(test) == "is_fsdp_enabled":
        return (True, False)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        return _comparison_knowledge(test.left, target.operator, target.comparator)
    return _UNKNOWN


def _comparison_knowledge(left: cst.BaseExpression, operator: cst.BaseCompOp, right: cst.BaseExpression) -> Knowledge:
    if isinstance(operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
        positive = isinstance(operator, (cst.Equal, cst.Is))
        if _last_name(right) == "distributed_type":
            left, right = right, left
        if _last_name(left) == "distributed_type":
            member = _distributed_type_member(right)
            if member == "FSDP":
                return (True, False) if positive else (False, True)
            if member is not None:  # another mode: equal to it means not FSDP
                return (False, None) if positive else (None, False)
        if _last_name(read_through(left)) == "fsdp_plugin":
            if is_none(right):
                return (False, True) if positive else (True, False)
        return _UNKNOWN
    if isinstance(operator, (cst.In, cst.NotIn)) and _last_name(left) == "distributed_type":
        members = _distributed_type_members(right)
        if members is None:
            return _UNKNOWN
        # True of `in` means one of the members; False of `in` means none of them.
        knowledge: Knowledge = (None, False) if "FSDP" in members else (False, None)
        return knowledge if isinstance(operator, cst.In) else (knowledge[1], knowledge[0])
    return _UNKNOWN


def _distributed_type_member(node: cst.BaseExpression) -> str | None:
    """``FSDP`` for ``DistributedType.FSDP`` or the string ``"FSDP"`` (DistributedType is a str enum)."""
    name = dotted_name(node)
    if name is not None and "." in name and name.rsplit(".", 2)[-2] == "DistributedType":
        return name.rsplit(".", 1)[-1]
    if isinstance(node, cst.SimpleString) and node.value[-1:] in ("'", '"') and node.prefix == "":
        value = node.evaluated_value
        return value if isinstance(value, str) and value.isupper() else None
    return None


def _distributed_type_members(node: cst.BaseExpression) -> set[str] | None:
    if not isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return None
    members = set()
    for element in node.elements:
        if isinstance(element, cst.StarredElement):
            return None
        member = _distributed_type_member(element.value)
        if member is None:
            return None
        members.add(member)
    return members


def _last_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def earlier_siblings(statements: Sequence[cst.CSTNode], child: cst.CSTNode) -> list[cst.CSTNode]:
    for index, statement in enumerate(statements):
        if statement is child:
            return list(statements[:index])
    return []


def _leaves_unless(statement: cst.CSTNode, leaf: Callable[[cst.BaseExpression], Knowledge]) -> bool:
    """True when control passes ``statement`` only where the property holds."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(_leaves_unless(small, leaf) for small in statement.body)
    if isinstance(statement, cst.Assert):
        return proves(statement.test, True, leaf)
    if isinstance(statement, cst.If):
        body_exits = always_exits(statement.body)
        else_exits = statement.orelse is not None and always_exits(statement.orelse)
        if body_exits and not else_exits:
            # Falling through means the test was false (for an elif chain, the first test at least).
            return proves(statement.test, False, leaf)
        if else_exits and not body_exits and isinstance(statement.orelse, cst.Else):
            return proves(statement.test, True, leaf)
    return False


def always_exits(block: cst.CSTNode) -> bool:
    """True when no path through ``block`` (a suite, an ``else`` or an ``elif``) falls out of its end."""
    if isinstance(block, cst.Else):
        return always_exits(block.body)
    if isinstance(block, cst.If):
        return always_exits(block.body) and block.orelse is not None and always_exits(block.orelse)
    statements = getattr(block, "body", ())
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, _EXITS):  # the last small statement of a one-line suite
        return True
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], _EXITS)
    if isinstance(last, cst.If):
        return always_exits(last)
    return False
