"""Syntax newer than a Python version: what CPython's ``feature_version`` does not see.

CPython's parser checks much of it against an older version (``ast.parse(..., feature_version=)``:
``match``, ``except*``, parenthesised context managers, the walrus, type parameters on 3.12+),
but not PEP 701 f-strings (3.12: the same quote, a backslash or a comment inside ``{}``), PEP 646
star expressions in subscripts (3.11), or PEP 614 decorators (3.9); and it cannot see syntax newer
than itself at all, which LibCST parses (a 3.12 ``type`` statement under 3.11). This module finds
those, on CPython's tree when CPython parsed the file, on LibCST's when only LibCST did.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from dataclasses import dataclass

PEP701 = (3, 12)


@dataclass(frozen=True)
class NewerSyntax:
    feature: str  # what it is, as the message names it: "a `match` statement"
    version: tuple[int, int]  # the first Python version that accepts it
    line: int  # 1-based
    column: int  # 1-based


# ---- PEP 701 f-strings ------------------------------------------------------------------------

_STRING_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"})


class _Scan:
    """One pass over string literals as Python 3.12 reads them, noting what older f-strings forbid."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reason: str | None = None

    def flag(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def literal(self, start: int) -> int:
        """The end of the string literal that starts (prefix included) at ``start``."""
        text = self.text
        quote_at = start
        while quote_at < len(text) and text[quote_at] not in "'\"":
            quote_at += 1
        prefix = text[start:quote_at].lower()
        char = text[quote_at]
        quote = char * 3 if text.startswith(char * 3, quote_at) else char
        body = quote_at + len(quote)
        if "f" not in prefix and "t" not in prefix:
            return _plain_end(text, body, quote)
        end = self.fstring_body(body, quote, raw="r" in prefix, spec_depth=0)
        if "f" in prefix and self.reason is None and _plain_end(text, body, quote) != end:
            # Before 3.12 an f-string was first read as a plain string: it ended at the first
            # unescaped quote of its own kind, or at the end of the line.
            self.flag("an f-string that reuses its quote character inside {}")
        return end

    def fstring_body(self, k: int, quote: str, raw: bool, spec_depth: int) -> int:
        text, n = self.text, len(self.text)
        while k < n:
            if text.startswith(quote, k):
                return k + len(quote)
            char = text[k]
            if char == "\\":
                if not raw and text.startswith("N{", k + 1):  # \N{NAME}: its braces are no field
                    close = text.find("}", k)
                    k = n if close < 0 else close + 1
                else:
                    k += 2
            elif char == "{":
                if text.startswith("{{", k):
                    k += 2
                else:
                    k = self.field(k + 1, quote, raw, spec_depth)
            elif char == "}":
                k += 2 if text.startswith("}}", k) else 1
            elif char == "\n" and len(quote) == 1:
                return k  # not valid in any version; CPython has said so already
            else:
                k += 1
        return n

    def field(self, k: int, quote: str, raw: bool, spec_depth: int) -> int:
        """From just after a field's ``{`` to just after its ``}``."""
        text, n = self.text, len(self.text)
        depth = 0
        while k < n:
            char = text[k]
            if char in "'\"" or (char.isalpha() and self._prefixed_string(k)):
                end = self.literal(k)
                if "\\" in text[k:end]:
                    self.flag("a backslash inside an f-string's {}")
                k = end
                continue
            if char.isalpha() or char == "_":
                while k < n and (text[k].isalnum() or text[k] == "_"):
                    k += 1
                continue
            if char == "\\":
                self.flag("a backslash inside an f-string's {}")
            elif char == "#":
                self.flag("a comment inside an f-string's {}")
                while k < n and text[k] != "\n":
                    k += 1
                continue
            elif char == "\n" and len(quote) == 1:
                self.flag("a line break inside a one-line f-string's {}")
            elif char in "([{":
                depth += 1
            elif char in ")]" or (char == "}" and depth > 0):
                depth -= 1
            elif depth == 0 and char == "}":
                return k + 1
            elif depth == 0 and char == "!" and not text.startswith("!=", k):
                k += 1
                while k < n and text[k] not in ":}":
                    k += 1
                continue
            elif depth == 0 and char == ":":
                return self.format_spec(k + 1, quote, raw, spec_depth)
            k += 1
        return n

    def format_spec(self, k: int, quote: str, raw: bool, spec_depth: int) -> int:
        text, n = self.text, len(self.text)
        while k < n:
            if text.startswith(quote, k):
                return k  # unterminated field: the f-string's own end is next
            char = text[k]
            if char == "}":
                return k + 1
            if char == "{":
                if spec_depth + 1 >= 2:
                    self.flag("f-string fields nested this deep in format specs")
                k = self.field(k + 1, quote, raw, spec_depth + 1)
                continue
            k += 2 if char == "\\" else 1
        return n

    def _prefixed_string(self, k: int) -> bool:
        end = k
        while end < len(self.text) and self.text[end].isalpha():
            end += 1
        starts_name = k == 0 or not (self.text[k - 1].isalnum() or self.text[k - 1] == "_")
        return starts_name and end < len(self.text) and self.text[end] in "'\"" and self.text[k:end].lower() in _STRING_PREFIXES


def _plain_end(text: str, body: int, quote: str) -> int:
    """Where a plain string whose body starts at ``body`` ends (after its closing quote)."""
    k, n = body, len(text)
    while k < n:
        if text.startswith(quote, k):
            return k + len(quote)
        if text[k] == "\\":
            k += 2
            continue
        if text[k] == "\n" and len(quote) == 1:
            return k
        k += 1
    return n


def pep701_reason(literals: str) -> str | None:
    """What in these string literals (one, or several implicitly concatenated, with the blanks,
    comments and line continuations between them) only Python 3.12+ accepts; None when nothing."""
    scan = _Scan(literals)
    k, n = 0, len(literals)
    while k < n and scan.reason is None:
        char = literals[k]
        if char in " \t\r\n\f\\":
            k += 1
        elif char == "#":
            while k < n and literals[k] != "\n":
                k += 1
        elif char in "'\"" or char.isalpha():
            k = scan.literal(k)
        else:
            k += 1  # a bracket around the literal (CPython's positions include none, LibCST's may)
    return scan.reason


# ---- on CPython's tree ------------------------------------------------------------------------


def newer_in_ast(tree: ast.Module, text: str, target: tuple[int, int], running: tuple[int, int]) -> NewerSyntax | None:
    """The first syntax newer than ``target`` that ``ast.parse(feature_version=target)`` lets
    through, in a file the running interpreter parsed."""
    lines = text.splitlines(keepends=True)
    found: list[NewerSyntax] = []
    check_fstrings = target < PEP701 <= running  # under 3.11 no such f-string compiles
    for node in ast.walk(tree):
        # CPython's feature_version finds these too, but places them at their last token.
        if target < (3, 10) and isinstance(node, ast.Match):
            found.append(_at((node.lineno, node.col_offset), "a `match` statement", (3, 10)))
        elif target < (3, 11) and isinstance(node, ast.TryStar):
            found.append(_at((node.lineno, node.col_offset), "`except*`", (3, 11)))
        elif target < (3, 9) and isinstance(node, (ast.With, ast.AsyncWith)) and _grouped_with(lines, node):
            found.append(_at((node.lineno, node.col_offset), "parenthesized context managers", (3, 9)))
        elif target < (3, 9) and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                if not _old_decorator(decorator):
                    found.append(_at(node_at(decorator), "a decorator that is not a dotted name or a call of one", (3, 9)))
        elif target < (3, 11) and isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Starred) or (
                isinstance(index, ast.Tuple)
                and any(isinstance(e, ast.Starred) for e in index.elts)
                and _char_at(lines, index.lineno, index.col_offset) != "("
            ):
                found.append(_at(node_at(index), "a star expression in a subscript", (3, 11)))
        elif target < (3, 11) and isinstance(node, ast.arguments):
            vararg = node.vararg
            if vararg is not None and isinstance(vararg.annotation, ast.Starred):
                found.append(_at(node_at(vararg.annotation), "a star annotation on *args", (3, 11)))
        elif check_fstrings and isinstance(node, ast.JoinedStr):
            reason = pep701_reason(_segment(lines, node))
            if reason is not None:
                found.append(_at(node_at(node), reason, PEP701))
    return min(found, key=lambda f: (f.line, f.column), default=None)


def node_at(node: ast.expr) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _at(position: tuple[int, int], feature: str, version: tuple[int, int]) -> NewerSyntax:
    return NewerSyntax(feature, version, position[0], position[1] + 1)


def _grouped_with(lines: list[str], node: ast.With | ast.AsyncWith) -> bool:
    """``with (a as b, c as d):``: one pair of brackets around items that bind names (``with
    (a, b):`` is a tuple to Python 3.8, and ``with (a) as b:`` a bracketed expression)."""
    last = node.items[-1]
    end = last.optional_vars if last.optional_vars is not None else last.context_expr
    if not any(item.optional_vars is not None for item in node.items) or end.end_lineno is None:
        return False
    head = _segment_between(lines, (node.lineno, node.col_offset), (end.lineno, end.col_offset))
    after = _segment_between(lines, (end.end_lineno, end.end_col_offset or 0), (node.body[0].lineno, node.body[0].col_offset))
    opened = head.split(None, 1)[1:] if not isinstance(node, ast.AsyncWith) else head.split(None, 2)[2:]
    closing = after.lstrip().lstrip(",").lstrip()
    return bool(opened) and opened[0].startswith("(") and closing.startswith(")") and closing[1:].lstrip().startswith(":")


def _segment_between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text from one CPython position (line, byte column) to another."""
    if start[0] == end[0]:
        return lines[start[0] - 1].encode("utf-8")[start[1] : end[1]].decode("utf-8", "replace")
    head = lines[start[0] - 1].encode("utf-8")[start[1] :].decode("utf-8", "replace")
    tail = lines[end[0] - 1].encode("utf-8")[: end[1]].decode("utf-8", "replace")
    return head + "".join(lines[start[0] : end[0] - 1]) + tail


def _old_decorator(node: ast.expr) -> bool:
    """``@name``, ``@a.b.c`` or a call of one: all that Python before 3.9 accepts."""
    if isinstance(node, ast.Call):
        node = node.func
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _char_at(lines: list[str], lineno: int, byte_column: int) -> str:
    line = lines[lineno - 1].encode("utf-8")
    return line[byte_column : byte_column + 1].decode("utf-8", "replace")


def _segment(lines: list[str], node: ast.expr) -> str:
    # CPython's columns count UTF-8 bytes.
    assert node.end_lineno is not None and node.end_col_offset is not None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode("utf-8")[node.col_offset : node.end_col_offset].decode("utf-8", "replace")
    head = lines[first].encode("utf-8")[node.col_offset :].decode("utf-8", "replace")
    tail = lines[last].encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace")
    return head + "".join(lines[first + 1 : last]) + tail


# ---- on LibCST's tree (a file the running interpreter cannot parse) ---------------------------


def newer_in_cst(module: cst.Module, target: tuple[int, int]) -> NewerSyntax | None:
    """The first syntax newer than ``target`` in a module LibCST parsed and CPython did not."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    candidates = list(_cst_features(module))
    if not any(version > target for _, _, version in candidates):
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    found = [
        NewerSyntax(feature, version, positions[node].start.line, positions[node].start.column + 1)
        for node, feature, version in candidates
        if version > target
    ]
    return min(found, key=lambda f: (f.line, f.column))


def _cst_features(module: cst.Module) -> Iterator[tuple[cst.CSTNode, str, tuple[int, int]]]:
    from trllint.core.cst.walk import syntax_children

    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        pending.extend(reversed(syntax_children(node)))
        if isinstance(node, cst.Match):
            yield node, "a `match` statement", (3, 10)
        elif isinstance(node, cst.TryStar):
            yield node, "`except*`", (3, 11)
        elif isinstance(node, cst.TypeAlias):
            yield node, "a `type` statement", (3, 12)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.type_parameters is not None:
            yield node, "a type parameter list", (3, 12)
            for parameter in node.type_parameters.params:
                if getattr(parameter, "default", None) is not None:
                    yield parameter, "a type parameter default", (3, 13)
        elif isinstance(node, cst.FormattedString):
            reason = pep701_reason(module.code_for_node(node))
            if reason is not None:
                yield node, reason, PEP701
