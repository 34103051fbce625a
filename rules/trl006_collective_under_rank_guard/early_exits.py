"""What keeps some ranks from a collective (``Guard``), and the guard an early exit makes: ``if
not is_main: return`` (or a per-rank ``continue`` / ``break``) earlier in a block keeps the ranks
that take it from every collective after it in the block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names
from trllint.core.source import SourceFile
from trllint.facts.rank_split import RankSplit, rank_split
from trllint.semantic.model import SemanticModel

from .guard_syntax import code_of, exit_of, run_by

# What holds wherever a collective runs: (a test's code, its value), one per if passed.
Holds = set[tuple[str, bool]]


@dataclass(frozen=True)
class Guard:
    """What keeps some ranks from a collective: a test, an early exit before it, or a decorator."""

    node: cst.CSTNode  # the If / IfExp, the exiting If, or the FunctionDef
    how: str  # "if", "else", "exit", "decorator"
    detail: str  # the test's text, the exit statement, or the decorator's name
    split: RankSplit | None = None  # why the test parts the ranks (None for a decorator)


class ExitRule(Protocol):
    """TRL006's rule as the exits read it (rule.py imports this module)."""

    @property
    def model(self) -> SemanticModel: ...

    @property
    def source(self) -> SourceFile: ...

    def enters_kind(self, node: cst.CSTNode, kind: str | None = None, *, nested: bool = False) -> bool: ...


def fact_of(model: SemanticModel, test: cst.BaseExpression, value: bool) -> tuple[str, bool]:
    """``not x`` true is ``x`` false: one spelling per test, for comparing tests by their code."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, value = test.expression, not value
    return model.once((code_of, test), lambda: code_of(model.source, test)), value


def early_exit_before(
    rule: ExitRule, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode, kind: str | None, holds: Holds
) -> Guard | None:
    """``if not is_main: return`` (or a per-rank ``continue``/``break``) earlier in ``block``.
    An exit that needs a test the collective's own ifs deny is never taken where it runs
    (``if gather_on_master and rank != 0: return`` ... ``if not gather_on_master: barrier()``),
    while nothing between them rebinds that test's names."""
    for index, statement in enumerate(block.body):
        if statement is child:
            return None
        if not isinstance(statement, cst.If) or statement.orelse is not None:
            continue
        exit_kind = exit_of(statement.body)
        if exit_kind is None or (kind is not None and rule.enters_kind(statement.body, kind)):
            continue
        if _denied_where_it_runs(rule.model, statement.test, holds, block.body[index + 1 :], child):
            continue
        # In a loop, this rank's own data parts the ranks too (`if torch.isnan(loss): break`);
        # a `return` on it reads a parameter's name, no proof of what callers pass.
        split = rank_split(rule.model, statement.test, statement, data=exit_kind != "return")
        if split is not None:
            return Guard(statement, "exit", f"if {code_of(rule.source, statement.test)}: {exit_kind}", split)
    return None


def _denied_where_it_runs(
    model: SemanticModel, test: cst.BaseExpression, holds: Holds, after: Sequence[cst.CSTNode], child: cst.CSTNode
) -> bool:
    conjuncts: list[cst.BaseExpression] = []
    pending = [test]
    while pending:  # `a and b and c`: the exit needs each of them
        operand = pending.pop()
        if isinstance(operand, cst.BooleanOperation) and isinstance(operand.operator, cst.And):
            pending += [operand.left, operand.right]
        else:
            conjuncts.append(operand)
    # The collective's own ifs hold the opposite of the operand.
    denied = [operand for operand in conjuncts if _negated(fact_of(model, operand, True)) in holds]
    if not denied:
        return False  # read first: most exits are denied by nothing, and the walk below is the cost
    between: list[cst.CSTNode] = []
    for statement in after:
        if statement is child:
            break
        between.append(statement)
    rebound = {
        name
        for statement in between
        for assign in run_by(statement, kinds=(cst.Assign,))
        for target in assign.targets
        for name in assigned_names(target.target)
    }
    return any(not walk.identifiers(operand) & rebound for operand in denied)


def _negated(fact: tuple[str, bool]) -> tuple[str, bool]:
    return fact[0], not fact[1]
