"""A run's log file: numbers formatted into a file that only the ranks a rank test lets in open
for writing (``if master_process: with open(logfile, "a") as f: f.write("s:%d trl:%f" % (step,
lossf))``). Loops with no tracker keep the run's record this way (the curves are plotted from it);
one rank writes it, so what that rank formats into it is taken as the run's.

``print`` alone is no such record: every rank may print, and a console line names no run.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import argument, call_name, dotted_name
from trllint.facts.rank_split import under_rank_split
from trllint.facts.scope_flow import RankFlow
from trllint.semantic.model import SemanticModel

from .metric_syntax import statement_calls

# The words a scope spells when it writes a log file: only such a scope needs its flow for it.
LOG_FILE_WORDS = frozenset({"open", "write"})


def log_file_values(model: SemanticModel, flow: RankFlow) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
    """The values ``flow``'s scope formats into a text file it opened for writing, where the write
    runs under a rank test, each with the statement that writes it."""
    found: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
    for small, line in flow.statements:
        for call in statement_calls(small):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "write" and call.args):
                continue
            handle = dotted_name(func.value)
            if handle is None or not _opened_for_text_writing(model, line, handle, flow.scope):
                continue
            if under_rank_split(model, line, flow.scope):
                found.extend((value, line) for value in formatted_values(call.args[0].value))
    return found


def formatted_values(text: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values formatted into a string: an f-string's expressions, the right side of ``%``,
    the arguments of ``.format(...)``; nothing for a string built otherwise."""
    if isinstance(text, cst.FormattedString):
        return [part.expression for part in text.parts if isinstance(part, cst.FormattedStringExpression)]
    if isinstance(text, cst.BinaryOperation) and isinstance(text.operator, cst.Modulo):
        if isinstance(text.left, (cst.SimpleString, cst.ConcatenatedString)):
            right = text.right
            return [element.value for element in right.elements] if isinstance(right, cst.Tuple) else [right]
    if isinstance(text, cst.Call) and isinstance(text.func, cst.Attribute) and text.func.attr.value == "format":
        if isinstance(text.func.value, (cst.SimpleString, cst.ConcatenatedString)):
            return [arg.value for arg in text.args if not arg.star]
    return []


def _opened_for_text_writing(model: SemanticModel, line: cst.CSTNode, handle: str, scope: cst.CSTNode) -> bool:
    """``handle`` is the name a ``with open(path, "a"|"w") as handle:`` around ``line`` binds."""
    for ancestor in model.context.ancestors(line):
        if ancestor is scope:
            return False
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                opened = item.item
                if item.asname is None or dotted_name(item.asname.name) != handle:
                    continue
                if not (isinstance(opened, cst.Call) and call_name(opened) == "open"):
                    return False
                mode = argument(opened, "mode", 1)
                if mode is None or not isinstance(mode.value, cst.SimpleString):
                    return False
                letters = mode.value.evaluated_value
                return isinstance(letters, str) and ("a" in letters or "w" in letters) and "b" not in letters
    return False

