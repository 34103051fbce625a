"""How a fix lays out a call that no longer fits on its line (TRL002 and TRL004 use it).

As Black, Ruff's formatter and LibCST do: the arguments go on one line of their own, one indent
step in, and the closing bracket comes back to the statement's indent. Inside brackets a line
break is always valid, so the fixed file still parses whatever the statement around it is.
"""

from __future__ import annotations

import libcst as cst


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def arguments_on_their_own_line(arguments: str, indent: str, module: cst.Module) -> str:
    """The text between a call's brackets, ``arguments`` on a line of their own below ``indent``."""
    newline = module.default_newline
    return f"{newline}{indent}{module.default_indent}{arguments}{newline}{indent}"
