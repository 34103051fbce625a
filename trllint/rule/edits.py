"""How a fix lays out code it writes: a call that no longer fits on its line (TRL002, TRL004),
a statement hoisted out of the ``if`` around it (TRL006, TRL007: the hoist itself is here, and
each rule adds what it alone asks before offering it).

As Black, Ruff's formatter and LibCST do: the arguments go on one line of their own, one indent
step in, and the closing bracket comes back to the statement's indent. Inside brackets a line
break is always valid, so the fixed file still parses whatever the statement around it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.findings import Edit
from trllint.facts.ranks import only_rank_tests

if TYPE_CHECKING:
    from trllint.core.source import SourceFile
    from trllint.semantic.model import SemanticModel


class HoistContext(Protocol):
    """What a hoist reads of the rule that offers it (a ``Rule`` is one): the file, its model,
    and where its nodes are."""

    @property
    def model(self) -> SemanticModel: ...

    @property
    def source(self) -> SourceFile: ...

    def span_of(self, node: cst.CSTNode) -> tuple[int, int]: ...

    def get_metadata(self, key: Any, node: cst.CSTNode) -> Any: ...


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def arguments_on_their_own_line(arguments: str, indent: str, module: cst.Module) -> str:
    """The text between a call's brackets, ``arguments`` on a line of their own below ``indent``."""
    newline = module.default_newline
    return f"{newline}{indent}{module.default_indent}{arguments}{newline}{indent}"


def lone_call_target(statement: cst.BaseStatement, call: cst.Call) -> str | None:
    """``""`` for ``call(...)`` alone on its line, the name for ``name = call(...)``, else None:
    the statements a hoist can move as a whole."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and small.value is call:
        return ""
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None


def reindented_to_guard(rule: HoistContext, statement: cst.BaseStatement, guard: cst.If) -> str | None:
    """The statement's lines (its comments included) at the indentation of the ``if``; None when
    a line of it is a string literal's continuation, whose text must not move."""
    start, end = rule.span_of(statement)
    lines = rule.source.lines
    first_line = rule.get_metadata(PositionProvider, statement).start
    body_indent = lines[first_line.line - 1][: first_line.column]
    guard_start = rule.get_metadata(PositionProvider, guard).start
    guard_indent = lines[guard_start.line - 1][: guard_start.column]
    moved = []
    for line in rule.source.text[start:end].splitlines(keepends=True):
        if not line.strip():
            moved.append(line)
        elif line.startswith(body_indent):
            moved.append(guard_indent + line[len(body_indent) :])
        else:
            return None
    return "".join(moved)


@dataclass(frozen=True)
class Hoisted:
    """A call's statement moved from the top of an ``if <rank test>:`` body to just above the
    ``if``, so that every rank runs it (TRL006's collectives, TRL007's sharded generate)."""

    statement: cst.BaseStatement
    # The name the statement binds (``name = call(...)``), "" for a bare call.
    target: str
    edits: tuple[Edit, ...]


def hoisted_above_rank_guard(rule: HoistContext, call: cst.Call, guard: cst.If) -> Hoisted | None:
    """The edits that move ``call``'s statement above ``guard``; None where the move could change
    what the guarded ranks compute or drop text the user wrote.

    Moved only when the test is made of rank tests alone (a flag or a step counter in it would
    have its other branch run every time), the ``if`` is no ``elif`` (nothing may go above it),
    the call is the first statement of the body and alone on its line (the guarded ranks then run
    the same statements in the same order), and the name it binds is not read by the test. An
    ``if`` the move empties is removed, so an ``else`` or a comment of its own keeps it in place.
    What the rules ask on top (the ``else``; names the call reads that some ranks may not have
    bound) they ask before this."""
    if not isinstance(guard.body, cst.IndentedBlock) or isinstance(rule.model.context.parent(guard), cst.If):
        return None
    if not only_rank_tests(rule.model, guard.test):
        return None
    body = guard.body
    first = body.body[0]
    target = lone_call_target(first, call)
    if target is None or (target and target in names_read(guard.test)):
        return None
    alone = len(body.body) == 1
    if alone and (
        guard.orelse is not None
        or body.header.comment is not None
        or any(line.comment is not None for line in body.footer)
    ):
        return None
    moved = reindented_to_guard(rule, first, guard)
    if moved is None:
        return None
    guard_start, guard_end = rule.span_of(guard)
    if alone:
        header_line = rule.get_metadata(PositionProvider, guard).start.line
        leading = rule.source.text[guard_start : rule.source.offset(header_line, 0)]
        return Hoisted(first, target, (Edit(guard_start, guard_end, leading + moved),))
    statement_start, statement_end = rule.span_of(first)
    return Hoisted(first, target, (Edit(guard_start, guard_start, moved), Edit(statement_start, statement_end, "")))


def names_read(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads: of ``self.model``, ``self`` (an attribute is no variable)."""
    names: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Name):
            names.add(current.value)
        elif isinstance(current, cst.Attribute):
            pending.append(current.value)
            continue
        pending.extend(walk.syntax_children(current))
    return names


def read_outside(scope: cst.CSTNode, inside: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` appears in ``scope`` anywhere but under ``inside``: a hoisted call's
    result read where the other ranks now hold their own."""
    pending = [scope]
    while pending:
        current = pending.pop()
        if current is inside:
            continue
        if isinstance(current, cst.Name) and current.value == name:
            return True
        pending.extend(walk.syntax_children(current))
    return False
