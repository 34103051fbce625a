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

from typing import Protocol

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import argument, assigned_names
from trllint.core.findings import ReasonKind
from trllint.facts.rank_split import differs_by_rank
from trllint.rule.base import Edit, Fix
from trllint.rule.edits import HoistContext, hoisted_above_rank_guard, names_read, read_outside


class GenerateRule(HoistContext, Protocol):
    """TRL007's rule as the hoist reads it (rule.py imports this module: the hoist names what it
    asks of the rule rather than importing its class)."""

    def fix(self, *edits: Edit, reason: str | None = None) -> Fix: ...


class HoistUnsafe(ReasonKind):
    """Why the hoisted call may still hang, or change what the other ranks compute."""

    UNSYNCED = "the hoisted generate passes synced_gpus=False: ranks that finish first still leave the others waiting"
    NOT_SEEN = (
        "{label} is not a model accelerate or the Trainer prepared, so transformers may not see ZeRO-3 or FSDP "
        "and keep the ranks in step through the generation (pass synced_gpus=True)"
    )
    READ_AFTER = "`{name}` is read after the rank test, where the other ranks now hold their own result"


def hoist_generate(rule: GenerateRule, call: cst.Call, guard: cst.If) -> Fix | None:
    if guard.orelse is not None:
        return None  # an else would run after the hoisted call on the other ranks
    hoisted = hoisted_above_rank_guard(rule, call, guard)
    if hoisted is None:
        return None
    scope = rule.model.context.enclosing_function(guard) or rule.source.module
    if names_read(call) & _bound_under_rank_tests(rule, scope, hoisted.statement):
        return None  # some ranks would run the call with a name they never bound
    return rule.fix(*hoisted.edits, reason=_reason(rule, call, guard, scope, hoisted.target))


def _reason(rule: GenerateRule, call: cst.Call, guard: cst.If, scope: cst.CSTNode, target: str) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "generate":
        synced = argument(call, "synced_gpus")
        if synced is not None and not (isinstance(synced.value, cst.Name) and synced.value.value == "True"):
            return HoistUnsafe.UNSYNCED.text()
        if isinstance(func.value, cst.Attribute) and func.value.attr.value == "module" and synced is None:
            return HoistUnsafe.NOT_SEEN.text(label=rule.source.module.code_for_node(func.value))
    if target and read_outside(scope, guard.body, target):
        return HoistUnsafe.READ_AFTER.text(name=target)
    return None


def _bound_under_rank_tests(rule: GenerateRule, scope: cst.CSTNode, moved: cst.CSTNode) -> set[str]:
    """Names some ranks may not have bound: assigned under a rank test (the moved statement aside)."""
    bound: set[str] = set()
    model = rule.model

    class Targets(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_If(self, node: cst.If) -> None:
            self.depth += differs_by_rank(model, node.test, node, data=False)

        def leave_If(self, node: cst.If) -> None:
            self.depth -= differs_by_rank(model, node.test, node, data=False)

        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> bool:
            return line is not moved

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if self.depth:
                bound.update(assigned_names(target.target))

    walk.visit(scope, Targets())
    return bound
