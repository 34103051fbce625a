"""The fix: move the generate (or forward) out of ``if <rank test>:`` to just above it, so that
every rank runs it, and keep what uses its result (the printing, the logging) under the test.

    if accelerator.is_main_process:                    samples = unwrapped.generate(**prompt)
        samples = unwrapped.generate(**prompt)   ->    if accelerator.is_main_process:
        print(tokenizer.batch_decode(samples))             print(tokenizer.batch_decode(samples))

Offered only where the move cannot change what the guarded ranks compute: the test is made of
rank tests only and the ``if`` has no ``else`` and is no ``elif``; the call is the first statement
of the body, alone on its line, a bare call or ``name = call``; every name it reads is bound on
every rank (none is assigned under a rank test); the name it binds is not read by the test.

Safe where the other ranks only add work that keeps the shards' gathers in step: a forward, or a
``generate`` that transformers synchronises (``synced_gpus`` on by default where it sees ZeRO-3 or
FSDP: a model accelerate or the Trainer prepared), whose result the other ranks do not read after
the ``if``. Otherwise unsafe, with the fact that is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.rule.edits import lone_call_target, reindented_to_guard
from trllint.core.cst import walk
from trllint.core.cst.names import argument, assigned_names
from trllint.core.findings import ReasonKind
from trllint.facts.ranks import only_rank_tests, splits_ranks
from trllint.rule.base import Edit, Fix

if TYPE_CHECKING:
    from .rule import ShardedGenerateOutOfStep


class HoistUnsafe(ReasonKind):
    """Why the hoisted call may still hang, or change what the other ranks compute."""

    UNSYNCED = "the hoisted generate passes synced_gpus=False: ranks that finish first still leave the others waiting"
    NOT_SEEN = (
        "{label} is not a model accelerate or the Trainer prepared, so transformers may not see ZeRO-3 or FSDP "
        "and keep the ranks in step through the generation (pass synced_gpus=True)"
    )
    READ_AFTER = "`{name}` is read after the rank test, where the other ranks now hold their own result"


def hoist_generate(rule: ShardedGenerateOutOfStep, call: cst.Call, guard: cst.If) -> Fix | None:
    context = rule.model.context
    if guard.orelse is not None or isinstance(context.parent(guard), cst.If):
        return None  # an else would run after the hoisted call on the other ranks; an elif has no place above
    if not only_rank_tests(rule.model, guard.test) or not isinstance(guard.body, cst.IndentedBlock):
        return None
    first = guard.body.body[0]
    target = lone_call_target(first, call)
    if target is None or (target and target in _names(guard.test)):
        return None
    scope = context.enclosing_function(guard) or rule.source.module
    if _names(call) & _bound_under_rank_tests(rule, scope, first):
        return None
    alone = len(guard.body.body) == 1
    if alone and (guard.body.header.comment is not None or any(line.comment for line in guard.body.footer)):
        return None
    moved = reindented_to_guard(rule, first, guard)
    if moved is None:
        return None
    guard_start, guard_end = rule.span_of(guard)
    if alone:
        header_line = rule.get_metadata(PositionProvider, guard).start.line
        leading = rule.source.text[guard_start : rule.source.offset(header_line, 0)]
        edits = (Edit(guard_start, guard_end, leading + moved),)
    else:
        statement_start, statement_end = rule.span_of(first)
        edits = (Edit(guard_start, guard_start, moved), Edit(statement_start, statement_end, ""))
    return rule.fix(*edits, reason=_reason(rule, call, guard, scope, target))


def _reason(rule: ShardedGenerateOutOfStep, call: cst.Call, guard: cst.If, scope: cst.CSTNode, target: str) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "generate":
        synced = argument(call, "synced_gpus")
        if synced is not None and not (isinstance(synced.value, cst.Name) and synced.value.value == "True"):
            return HoistUnsafe.UNSYNCED.text()
        if isinstance(func.value, cst.Attribute) and func.value.attr.value == "module" and synced is None:
            return HoistUnsafe.NOT_SEEN.text(label=rule.source.module.code_for_node(func.value))
    if target and _read_outside(scope, guard.body, target):
        return HoistUnsafe.READ_AFTER.text(name=target)
    return None


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)  # `self.model`: `self`, not `model`
            return False

    node.visit(Names())
    return found


def _bound_under_rank_tests(rule: ShardedGenerateOutOfStep, scope: cst.CSTNode, moved: cst.CSTNode) -> set[str]:
    """Names some ranks may not have bound: assigned under a rank test (the moved statement aside)."""
    bound: set[str] = set()
    model = rule.model

    class Targets(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_If(self, node: cst.If) -> None:
            self.depth += splits_ranks(model, node.test)

        def leave_If(self, node: cst.If) -> None:
            self.depth -= splits_ranks(model, node.test)

        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> bool:
            return line is not moved

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if self.depth:
                bound.update(assigned_names(target.target))

    walk.visit(scope, Targets())
    return bound


def _read_outside(scope: cst.CSTNode, inside: cst.CSTNode, name: str) -> bool:
    found = False

    class Reads(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if node is inside:
                return False
            found = found or (isinstance(node, cst.Name) and node.value == name)
            return not found

    scope.visit(Reads())
    return found
