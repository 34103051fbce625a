"""How a fix lays out code it writes: a call that no longer fits on its line (TRL002, TRL004),
a statement hoisted out of the ``if`` around it (TRL006, TRL007).

As Black, Ruff's formatter and LibCST do: the arguments go on one line of their own, one indent
step in, and the closing bracket comes back to the statement's indent. Inside brackets a line
break is always valid, so the fixed file still parses whatever the statement around it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import PositionProvider

if TYPE_CHECKING:
    from trllint.rule.base import Rule


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


def reindented_to_guard(rule: Rule, statement: cst.BaseStatement, guard: cst.If) -> str | None:
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
