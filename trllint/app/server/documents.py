"""An open file as the engine reads it: its bytes in, findings out, and fixes as the new text of
each of its editor documents.

A Python file is one text document. A notebook (LSP 3.17 notebook sync) is one text document per
cell; the cells are written out as the nbformat JSON the engine's notebook kind reads, with
every cell in its place, so a finding's cell number (the engine counts every cell, as an editor
does) is the cell's index plus one. Nothing here knows the protocol: positions are (line,
character) in code points, which the server turns into the client's units.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trllint.core.findings import Finding, Fix
from trllint.engine.fix_loop import apply_fix
from trllint.engine.inputs import EncodeError, Unreadable, kind_for
from trllint.engine.noqa import NoqaOutcome, with_noqa_comments
from trllint.engine.pipeline import FileResult, fix_bytes, lint_bytes
from trllint.rule.ruleset import RuleSet

# The line breaks of the Language Server Protocol (and of Python): a form feed is no line break.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """The text's lines with their breaks, as LSP counts lines."""
    return _LINE.findall(text) or [""]


@dataclass
class Part:
    """One editor document of a file: the file itself, or one cell of a notebook."""

    uri: str
    text: str
    version: int | None = None
    is_code: bool = True  # a notebook's markup cell is not
    language: str = "python"


@dataclass
class OpenFile:
    uri: str  # the file's (a notebook's, not a cell's)
    path: Path | None  # None: not a file on disk (an untitled buffer)
    filename: str  # the name that picks its kind: x.py, x.ipynb
    parts: list[Part]
    is_notebook: bool = False
    # The notebook's metadata as the client sent it: its kernel's language, if it says one.
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def display(self) -> str:
        return str(self.path) if self.path is not None else self.filename

    def data(self) -> bytes:
        if self.is_notebook:
            return self._notebook_json().encode("utf-8")
        return _python_bytes(self.parts[0].text) if kind_for(self.filename).is_python else self.parts[0].text.encode("utf-8")

    def _notebook_json(self) -> str:
        cells: list[dict[str, Any]] = [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": part.text}
            if part.is_code and part.language == "python"
            # A markup cell, or a code cell in another language (a %%R cell the client tells apart): not Python.
            else {"cell_type": "markdown" if not part.is_code else "raw", "metadata": {}, "source": part.text}
            for part in self.parts
        ]
        metadata = {key: self.metadata[key] for key in ("kernelspec", "language_info") if key in self.metadata}
        metadata.setdefault("language_info", {"name": "python"})
        return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, ensure_ascii=False)

    def texts(self, data: bytes) -> list[str] | None:
        """Each part's text in the file's bytes ``data`` (fixed ones); None when they cannot be read."""
        if self.is_notebook:
            try:
                cells = json.loads(data.decode("utf-8"))["cells"]
            except (ValueError, KeyError, TypeError):
                return None
            if len(cells) != len(self.parts):
                return None
            return [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"]) for cell in cells]
        try:
            decoded = kind_for(self.filename).decode(data, self.display, self.filename)
        except Unreadable:
            return None
        return None if decoded is None else [decoded.source.text]

    def part_of(self, finding: Finding) -> int:
        """The index of the part a finding stands in."""
        if self.is_notebook and finding.cell is not None and 0 < finding.cell <= len(self.parts):
            return finding.cell - 1
        if self.is_notebook:  # the notebook as a whole: its first code cell
            return next((i for i, part in enumerate(self.parts) if part.is_code), 0)
        return 0


def _python_bytes(text: str) -> bytes:
    """The text as its file holds it: in the encoding its coding cookie names, if any."""
    data = text.encode("utf-8")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return data  # an unknown codec: the engine reports it (TRL000)
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return data


def lint(file: OpenFile, ruleset: RuleSet) -> FileResult:
    return lint_bytes(file.data(), file.filename, ruleset, display=file.display, path=file.path)


def fix_all(file: OpenFile, ruleset: RuleSet) -> list[str] | None:
    """Each part's text with every safe fix applied (the engine's fix loop); None when nothing changed."""
    _, new = fix_bytes(file.data(), file.filename, ruleset, display=file.display, path=file.path)
    return None if new is None else file.texts(new)


def fix_one(file: OpenFile, ruleset: RuleSet, fix: Fix) -> list[str] | None:
    """Each part's text with one finding's fix applied; None when it cannot be (the result would
    not parse, or cannot be written back)."""
    decoded = _decode(file, ruleset)
    if decoded is None:
        return None
    new_text = apply_fix(decoded.source, fix)
    return _encoded(file, decoded, new_text)


def add_noqa(file: OpenFile, ruleset: RuleSet, finding: Finding) -> list[str] | None:
    """Each part's text with a ``# noqa: CODE`` comment silencing one finding on its line; None
    when its line cannot take one (``trllint.engine.noqa`` says which cannot)."""
    decoded = _decode(file, ruleset)
    if decoded is None:
        return None
    in_program = finding
    if file.is_notebook and finding.cell is not None:
        cells = {cell.number: cell for cell in decoded.notebook.cells}
        cell = cells.get(finding.cell)
        if cell is None:
            return None
        line = cell.first_line + finding.line - 1
        in_program = replace(finding, line=line, end_line=line)
    outcome = NoqaOutcome()
    new_text = with_noqa_comments(decoded.source, [in_program], outcome)
    if outcome.skipped or new_text == decoded.source.text:
        return None
    return _encoded(file, decoded, new_text)


def _decode(file: OpenFile, ruleset: RuleSet):
    try:
        return kind_for(file.filename).decode(file.data(), file.display, file.filename, file.path, target=ruleset.target)
    except Unreadable:
        return None


def _encoded(file: OpenFile, decoded, new_text: str) -> list[str] | None:
    if kind_for(file.filename).validate(decoded.source, new_text) is not None:
        return None
    try:
        return file.texts(decoded.encode(new_text))
    except EncodeError:
        return None


def changed_spans(old: str, new: str) -> list[tuple[int, int, str]]:
    """The replacements that turn ``old`` into ``new``: (start, end in ``old``, new text), one
    per run of changed lines, each cut to what changed, so that an editor keeps its marks and
    cursor on the lines a fix leaves alone."""
    import difflib

    old_lines, new_lines = split_lines(old), split_lines(new)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    spans = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        span = _changed_span("".join(old_lines[i1:i2]), "".join(new_lines[j1:j2]))
        if span is not None:
            start, end, content = span
            spans.append((starts[i1] + start, starts[i1] + end, content))
    return spans


def _changed_span(old: str, new: str) -> tuple[int, int, str] | None:
    """One replacement that turns ``old`` into ``new``, their common start and end left alone."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, new[start:end_new]


def position_at(lines: list[str], offset: int) -> tuple[int, int]:
    """(line, character), 0-based in code points, of an offset into the text of ``lines``."""
    for number, line in enumerate(lines):
        if offset <= len(line) and not (offset == len(line) and line.endswith(("\n", "\r"))):
            return number, offset
        offset -= len(line)
    if not lines:
        return 0, 0
    if lines[-1].endswith(("\n", "\r")):
        return len(lines), 0  # past the last line break: the line after it
    return len(lines) - 1, len(lines[-1])
