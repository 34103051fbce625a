"""What the tests on the paths to a node prove of a property.

A property holds at a node when every path that reaches it passed a test proving it: a branch
taken on the test (``if``/``else``, a conditional expression, ``and``/``or``), or an earlier
statement that leaves unless it holds (``if <test>: return``, ``assert <test>``). ``not``,
``and`` and ``or`` are read here; what a single test says of the property is the caller's
``leaf`` (for the backend: ``trllint.facts.launch.backend_tests``; for a bare model:
``trllint.facts.launch.branches``).

Whether every rank reaches a node is ``trllint.facts.rank_split.rank_divergence``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst

from trllint.semantic.model import SemanticModel

BlockOf = cst.IndentedBlock | cst.Module | cst.SimpleStatementLine | cst.SimpleStatementSuite

# What a test says about a property (a backend off, the model bare) when it is true, and when it is
# false: True (it holds), False (it does not) or None (nothing known).
Knowledge = tuple[bool | None, bool | None]

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


def holds_at(model: SemanticModel, node: cst.CSTNode, leaf: Callable[[cst.BaseExpression], Knowledge]) -> bool:
    """True when every path that reaches ``node`` in its function passed a test proving the
    property ``leaf`` reads: a branch taken on it (``if``/``else``, a conditional expression,
    the right operand of ``and``/``or``), or an earlier statement of an enclosing block that
    leaves unless it holds (``if <test>: return``, ``assert <test>``). A test outside the
    function says nothing of when the function runs. Each block's first statement that leaves
    unless the property holds is found once per leaf object (a leaf asked at every statement of a
    long block costs one reading of it)."""
    child: cst.CSTNode = node
    for ancestor in model.context.ancestors(node):
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
            if _left_before(model, ancestor, child, leaf):
                return True
        child = ancestor
    return False


def earlier_siblings(statements: Sequence[cst.CSTNode], child: cst.CSTNode) -> list[cst.CSTNode]:
    for index, statement in enumerate(statements):
        if statement is child:
            return list(statements[:index])
    return []


def _left_before(model: SemanticModel, block: BlockOf, child: cst.CSTNode, leaf: Callable[[cst.BaseExpression], Knowledge]) -> bool:
    """A statement of ``block`` before ``child`` leaves unless the property holds."""
    positions, leaving = model.once((_leaving_statements, id(block)), lambda: _leaving_statements(block))
    first = model.once((_left_before, leaf, id(block)), lambda: _first_leaving(leaving, leaf))
    return first is not None and first < positions.get(id(child), 0)


def _first_leaving(leaving: list[tuple[int, cst.CSTNode]], leaf: Callable[[cst.BaseExpression], Knowledge]) -> int | None:
    return next((index for index, statement in leaving if _leaves_unless(statement, leaf)), None)


def _leaving_statements(block: BlockOf) -> tuple[dict[int, int], list[tuple[int, cst.CSTNode]]]:
    """Each statement's position in ``block``, and the statements that may leave it unless a
    test holds (an ``assert``; an ``if`` with an arm that always leaves): one table per block,
    so that asking at every statement of a long block stays linear."""
    positions = {id(statement): index for index, statement in enumerate(block.body)}
    leaving = [(index, statement) for index, statement in enumerate(block.body) if _may_leave(statement)]
    return positions, leaving


def _may_leave(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Assert) for small in statement.body)
    if isinstance(statement, cst.If):
        return always_exits(statement.body) or (statement.orelse is not None and always_exits(statement.orelse))
    return isinstance(statement, cst.Assert)


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
