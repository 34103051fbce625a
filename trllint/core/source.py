"""One file's text: decoded once, parsed at most once, and re-encoded exactly as it came.

Python files are decoded the way the interpreter decodes them (PEP 263 coding cookie, UTF-8 BOM),
so a latin-1 file with a cookie round-trips byte for byte through ``--fix``.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol


if TYPE_CHECKING:
    import libcst as cst

# LibCST's idea of a line break; str.splitlines() also splits on \f, \x1c, \u2028 and friends,
# which would put our offsets on a different line from LibCST's positions.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceDecodeError(ValueError):
    """The bytes are not text in the encoding the file declares."""


class FileFacts(Protocol):
    """What a source knows of the facts kept about it (the semantic model, a layer above core,
    which core cannot name): they can be dropped."""

    def release(self) -> None: ...


# A file past this is most likely generated (a vendored wheel's tables, a model dump): LibCST needs
# ~0.5 KB of memory and ~40 µs per byte of source, so a 5 MB file would hold a worker for minutes and
# gigabytes. The largest hand-written files of transformers and DeepSpeed are about 300 KB. The
# default of ``max-file-size-mb``.
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024

@dataclass
class SourceFile:
    text: str
    display_path: str
    encoding: str = "utf-8"
    bom: bool = False
    is_python: bool = True
    # Where the file lives, when it is a file: the project it belongs to is found from here
    # (trllint.semantic.project.index). None for standard input and text held in memory.
    path: Path | None = None
    _module: cst.Module | None = field(default=None, repr=False)
    # What is known about the parsed module, each computed once however many rules ask:
    # the semantic model (trllint.semantic.model.SemanticModel), CPython's tree of the syntax
    # check (its statement lines place positions), and the positions placed so far.
    model: FileFacts | None = field(default=None, repr=False)
    cpython_tree: ast.Module | None = field(default=None, repr=False)
    # A trllint.core.positions.NodePositions, typed loosely: positions are placed from a source,
    # so the source does not import them (core's modules import each other one way).
    positions: object | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes, display_path: str, *, is_python: bool = True) -> SourceFile:
        bom = data.startswith(codecs.BOM_UTF8)
        encoding = "utf-8"
        if is_python:
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            except SyntaxError as exc:  # unknown codec in the cookie, or a cookie that contradicts the BOM
                if "invalid or missing encoding declaration" in str(exc):
                    raise SourceDecodeError("not valid UTF-8 text, and no coding declaration says otherwise") from None
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
            path=self.path,
        )

    # How many files this process parsed with LibCST (trllint.app.memory collects after each).
    parses: ClassVar[int] = 0

    @property
    def module(self) -> cst.Module:
        """The parsed module; raises ``libcst.ParserSyntaxError`` for source that does not parse."""
        if self._module is None:
            SourceFile.parses += 1
            # Here, not at the top: a file is read (and outlined by CPython's parser) without LibCST.
            import libcst

            self._module = libcst.parse_module(self.text)
        return self._module

    def release(self) -> None:
        """Drop the tree and every fact about it once the file is done. The analyses and the
        source point at each other, so reference counting alone would free none of it; the
        collector would have to walk it all (see trllint.app.memory)."""
        if self.model is not None:
            self.model.release()
        self.model = self._module = self.cpython_tree = self.positions = None

    @cached_property
    def line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]

    @cached_property
    def newline(self) -> str:
        """The file's line break, as LibCST picks it for new code: the first one in the file."""
        first = _LINE_BREAK.search(self.text)
        return first.group() if first else "\n"

    @cached_property
    def lines(self) -> list[str]:
        """Each line's text without its line break, indexed from 0 (one per ``line_starts``)."""
        return _split_lines(self.text)

    def offset(self, line: int, column: int) -> int:
        """Character offset in ``text`` of a 1-based line and 0-based column as LibCST counts them."""
        starts = self.line_starts
        if line - 1 >= len(starts):
            return len(self.text)
        # With positions LibCST cannot map onto the text (positions_reliable), no fix is
        # applied; the offset is still asked for while the rule builds it.
        columns = self._libcst_columns if self._module is not None else None
        shifted = columns.get(line) if columns else None
        if shifted is not None:
            column = shifted[min(column, len(shifted) - 1)]
        return starts[line - 1] + column

    @property
    def positions_reliable(self) -> bool:
        """Whether LibCST's positions can be mapped onto ``text`` exactly (fixes need that)."""
        return self._module is None or self._libcst_columns is not None

    @cached_property
    def _libcst_columns(self) -> dict[int, list[int]] | None:
        """For lines LibCST renders differently from the file: its column -> the file's column.

        LibCST drops a form feed at the start of a statement line (``\f`` page breaks in old
        code), so its columns on that line are short by one per form feed: an edit placed with
        them would land on the wrong characters. Other differences are not expected; ``None``
        says the positions cannot be trusted at all.
        """
        if "\f" not in self.text:
            return {}  # the only known difference; spares rendering the module again
        rendered = self.module.code
        if rendered == self.text:
            return {}
        ours, theirs = _split_lines(self.text), _split_lines(rendered)
        if len(ours) != len(theirs):
            return None
        columns: dict[int, list[int]] = {}
        for number, (text_line, code_line) in enumerate(zip(ours, theirs), start=1):
            if text_line == code_line:
                continue
            mapping = _deleted_characters_map(text_line, code_line)
            if mapping is None:
                return None
            columns[number] = mapping
        return columns

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based column of a character offset."""
        line_index = bisect_right(self.line_starts, offset) - 1
        return line_index + 1, offset - self.line_starts[line_index]


def _split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def _deleted_characters_map(text_line: str, code_line: str) -> list[int] | None:
    """Column in ``text_line`` of each column of ``code_line`` (and of its end), when
    ``code_line`` is ``text_line`` with some whitespace deleted; None otherwise."""
    mapping: list[int] = []
    i = 0
    for char in code_line:
        while i < len(text_line) and text_line[i] != char:
            if text_line[i] not in " \t\f":
                return None
            i += 1
        if i == len(text_line):
            return None
        mapping.append(i)
        i += 1
    if text_line[i:].strip(" \t\f"):
        return None
    mapping.append(i)
    return mapping
