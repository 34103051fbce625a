"""One file's text: decoded once, parsed at most once, and re-encoded exactly as it came.

Python files are decoded the way the interpreter decodes them (PEP 263 coding cookie, UTF-8 BOM),
so a latin-1 file with a cookie round-trips byte for byte through ``--fix``.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

# LibCST's idea of a line break; str.splitlines() also splits on \f, \x1c, \u2028 and friends,
# which would put our offsets on a different line from LibCST's positions.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceDecodeError(ValueError):
    """The bytes are not text in the encoding the file declares."""


@dataclass
class SourceFile:
    text: str
    display_path: str
    encoding: str = "utf-8"
    bom: bool = False
    is_python: bool = True
    _module: cst.Module | None = field(default=None, repr=False)
    # Facts about the parsed module that several rules ask for, computed once (trllint.analysis).
    facts: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes, display_path: str, *, is_python: bool = True) -> SourceFile:
        bom = data.startswith(codecs.BOM_UTF8)
        encoding = "utf-8"
        if is_python:
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            except SyntaxError as exc:  # unknown codec in the cookie, or a cookie that contradicts the BOM
                raise SourceDecodeError(str(exc)) from None
            if encoding == "utf-8-sig":
                encoding = "utf-8"
        body = data[len(codecs.BOM_UTF8) :] if bom else data
        try:
            text = body.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise SourceDecodeError(f"not valid {encoding} text ({exc.__class__.__name__}: {exc})") from None
        if "\x00" in text:
            raise SourceDecodeError("contains NUL bytes: binary, not source text")
        return cls(text=text, display_path=display_path, encoding=encoding, bom=bom, is_python=is_python)

    def to_bytes(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode(self.encoding)
        return codecs.BOM_UTF8 + body if self.bom else body

    def with_text(self, text: str) -> SourceFile:
        return SourceFile(
            text=text,
            display_path=self.display_path,
            encoding=self.encoding,
            bom=self.bom,
            is_python=self.is_python,
        )

    @property
    def module(self) -> cst.Module:
        """The parsed module; raises ``libcst.ParserSyntaxError`` for source that does not parse."""
        if self._module is None:
            self._module = cst.parse_module(self.text)
        return self._module

    @cached_property
    def line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]

    @cached_property
    def lines(self) -> list[str]:
        """Each line's text without its line break, indexed from 0."""
        starts = self.line_starts
        out = []
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(self.text)
            out.append(self.text[start:end].rstrip("\r\n"))
        return out

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based line and 0-based column."""
        starts = self.line_starts
        if line - 1 >= len(starts):
            return len(self.text)
        return starts[line - 1] + column

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based column of a character offset."""
        line_index = bisect_right(self.line_starts, offset) - 1
        return line_index + 1, offset - self.line_starts[line_index]
