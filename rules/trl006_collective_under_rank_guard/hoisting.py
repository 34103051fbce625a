"""The fix: move the collective out of ``if <rank test>:`` to just above it, so every rank runs it.

    if accelerator.is_main_process:                 state = accelerator.get_state_dict(model)
        state = accelerator.get_state_dict(model)   if accelerator.is_main_process:
        unwrapped.save_pretrained(out, ...)   ->        unwrapped.save_pretrained(out, ...)

Offered only where the move cannot change what the guarded ranks compute:

- the test is made of rank tests only (no flag or step counter whose other branch the move
  would run every time) and the ``if`` is no ``elif``;
- the collective is the first statement of the body, alone on its line, a bare call or
  ``name = call``: the guarded ranks run the same statements in the same order as before;
- the ``else`` enters no collective (the ranks would meet them in another order);
- every name the call reads is bound on every rank (none is assigned under a rank test).

It is ``unsafe`` whenever another collective of the same kind in the function is entered by some
ranks only: every rank must then enter the same sequence of collectives, and a hoist adds one
call on the ranks that meet the other one (an early exit's barrier, a staggered pair).

Otherwise it is ``safe`` when the call only adds work on the other ranks: it returns a new value (or only
synchronises) and writes files from the main process only, and the name it binds is read nowhere
outside the ``if``. Otherwise (``save_state``: every rank writes its own files; a bound name read
after the ``if``) it is ``unsafe``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names
from trllint.facts.branches import always_exits
from trllint.facts.rank_split import differs_by_rank
from trllint.rule.base import Edit, Fix
from trllint.rule.edits import HoistContext, hoisted_above_rank_guard, names_read, read_outside

from .guard_syntax import run_by

if TYPE_CHECKING:
    from trllint.semantic.context import NodeContext

    from .collectives import Collective


class CollectiveRule(HoistContext, Protocol):
    """TRL006's rule as the hoist reads it: what any hoist reads, and what the rule knows of the
    collectives a node enters (rule.py imports this module: the hoist names what it asks of the
    rule rather than importing its class)."""

    context: NodeContext

    def fix(self, *edits: Edit, reason: str | None = None) -> Fix: ...

    def enters_kind(self, node: cst.CSTNode, kind: str | None = None, *, nested: bool = False) -> bool: ...

    def collective_or_entering_call(self, call: cst.Call) -> Collective | None: ...


def hoist_fix(rule: CollectiveRule, collective: Collective, guard: cst.CSTNode) -> Fix | None:
    if collective.hoist == "never" or not isinstance(guard, cst.If):
        return None
    if guard.orelse is not None and rule.enters_kind(guard.orelse):
        return None  # the ranks would meet the collectives of the else in another order
    hoisted = hoisted_above_rank_guard(rule, collective.call, guard)
    if hoisted is None:
        return None
    scope = rule.context.enclosing_function(guard) or rule.source.module
    if names_read(collective.call) & _names_bound_under_rank_tests(rule, scope, hoisted.statement):
        return None  # some ranks would run the call with a name they never bound
    read_elsewhere = bool(hoisted.target) and read_outside(scope, guard.body, hoisted.target)
    # A method's ranks meet the class's other methods too (a context manager's __enter__ / __exit__).
    cls = rule.context.enclosing_class(guard)
    other = _other_guarded_entry(rule, collective, cls if cls is not None else scope)
    if other is not None:
        # The fact a hoist stands on: every rank then enters the same sequence of collectives.
        line = rule.get_metadata(PositionProvider, other.call).start.line
        reason = (
            f"only some ranks reach {other.label} on line {line} too: after the hoist some ranks may enter "
            "it once more than the others, and the job hangs"
        )
        return rule.fix(*hoisted.edits, reason=reason)
    if collective.hoist == "unsafe":
        reason = f"every rank now runs {collective.label}(), and each writes its own files"
    elif read_elsewhere:
        reason = "the hoisted call's result is read outside the guard, where other ranks now see it too"
    else:
        reason = None
    return rule.fix(*hoisted.edits, reason=reason)


def _other_guarded_entry(rule: CollectiveRule, collective: Collective, scope: cst.CSTNode) -> Collective | None:
    """Another collective of the same kind in ``scope`` that only some ranks reach (under a rank
    test, or after a rank test's early exit, matched or not): the ranks' counts of it are settled
    there, and a hoist would add one on some of them."""
    for call in run_by(scope, nested=isinstance(scope, cst.ClassDef)):
        if call is collective.call:
            continue
        other = rule.collective_or_entering_call(call)
        if other is not None and other.kind == collective.kind and _some_ranks_only(rule, call, scope):
            return other
    return None


def _some_ranks_only(rule: CollectiveRule, call: cst.Call, scope: cst.CSTNode) -> bool:
    child: cst.CSTNode = call
    for ancestor in rule.context.ancestors(call):
        if ancestor is scope or isinstance(ancestor, cst.FunctionDef):
            return False
        if (
            isinstance(ancestor, (cst.If, cst.IfExp))
            and child is not ancestor.test
            and differs_by_rank(rule.model, ancestor.test, ancestor, data=False)
        ):
            return True
        if isinstance(ancestor, cst.IndentedBlock):
            for statement in ancestor.body:
                if statement is child:
                    break
                if (
                    isinstance(statement, cst.If)
                    and differs_by_rank(rule.model, statement.test, statement, data=False)
                    and always_exits(statement.body)
                ):
                    return True
        child = ancestor
    return False


# Scopes of their own: what they hold does not run when the code around them runs.
def _names_bound_under_rank_tests(rule: CollectiveRule, scope: cst.CSTNode, moved: cst.CSTNode) -> set[str]:
    """Names some ranks may not have bound (the statement being moved set aside)."""
    bound: set[str] = set()
    model = rule.model

    class Assignments(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            if differs_by_rank(model, node.test, node, data=False):
                bound.update(_assigned_in(node.body, moved))
                if node.orelse is not None:
                    bound.update(_assigned_in(node.orelse, moved))

    walk.visit(scope, Assignments())
    return bound


def _assigned_in(node: cst.CSTNode, skipped: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Targets(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> bool:
            return line is not skipped

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            names.update(assigned_names(target.target))

        def visit_AnnAssign(self, assign: cst.AnnAssign) -> None:
            names.update(assigned_names(assign.target))

        def visit_AugAssign(self, assign: cst.AugAssign) -> None:
            names.update(assigned_names(assign.target))

        def visit_For(self, loop: cst.For) -> None:
            names.update(assigned_names(loop.target))

        def visit_AsName(self, alias: cst.AsName) -> None:
            names.update(assigned_names(alias.name) if isinstance(alias.name, cst.BaseExpression) else [])

    walk.visit(node, Targets())
    return names
