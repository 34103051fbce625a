"""Jupyter notebooks: the code cells linted as one program, findings and fixes mapped back to cells.

The code cells, in order, make one Python program, so a model prepared in cell 2 and read in
cell 5 is seen as it runs. IPython magics and shell lines (``%time``, ``!pip``, ``x = !ls``, a
``%%bash`` cell) are not Python: while linting, each line becomes a ``pass`` placeholder (a
statement, so an indented block that held one still parses), each line of a cell magic in
another language a comment (the body of ``%%time`` is Python, and linted), and they are put back
on write. A fix is written by
replacing only the ``source`` values of the cells it changed, in the file's own JSON style, so
outputs, metadata, cell ids, indentation, key order and the trailing newline stay byte for byte.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import json
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path, PurePath

from trllint.core.findings import Evidence, Finding
from trllint.core.source import SourceFile
from trllint.engine.inputs import EncodeError, Unreadable
from trllint.engine.inputs.python import PYTHON

PLACEHOLDER = "pass  # trllint: IPython magic"
# Cell magics whose body is Python run by the kernel (`%%time` around a training loop): the
# magic line is a placeholder and the body is linted.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
# Each line of any other cell magic (%%bash, %%writefile): comments, since its indentation means
# nothing to Python.
CELL_MAGIC_PLACEHOLDER = "# trllint: IPython cell magic"
_PLACEHOLDER_LINE = re.compile(r"^(?P<indent>[ \t]*)" + re.escape(PLACEHOLDER) + r"$")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A line IPython rewrites: `%magic`, `!shell`, `?help`, `name?`, `x = !ls`, `x = %time f()`.
_MAGIC = re.compile(r"^[ \t]*(?:[%!?]|[\w.]+\?{1,2}\s*$|[\w.,\s()\[\]]+=\s*[%!])")


class NotebookError(ValueError):
    """The file is not a notebook the linter can read, or a fix cannot be put back into it."""


@dataclass
class Cell:
    number: int  # 1-based position among all the notebook's cells, as an editor counts them
    source: str  # the cell's text, as the notebook holds it
    is_list: bool  # `source` is stored as a list of lines (nbformat's usual form), not one string
    span: tuple[int, int]  # where the `source` value stands in the notebook's text
    elements: list[tuple[int, int]]  # spans of the list's strings, when it is a list
    program_lines: list[str]  # the lines linted: magics replaced, the last one ending in a newline
    magics: list[tuple[str, str]]  # the replaced lines, in order, each with its placeholder's indent
    first_line: int = 0  # the program line the cell starts on


class Notebook:
    def __init__(self, data: bytes) -> None:
        self.bom = data.startswith(codecs.BOM_UTF8)
        try:
            self.text = data[3 if self.bom else 0 :].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotebookError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        try:
            document = json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
            raise NotebookError("not a Jupyter notebook in nbformat 4 (no top-level list of cells)")
        self.is_python = _is_python(document.get("metadata"))
        # Escapes of non-ASCII text (json.dumps's default) or the characters themselves (nbformat's).
        self.ensure_ascii = not any(ord(c) > 127 for c in self.text) and bool(
            re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", self.text)
        )
        self.cells: list[Cell] = []
        for number, (cell, span, elements) in enumerate(self._cell_sources(document["cells"]), start=1):
            if cell is not None:
                self.cells.append(cell_from(number, cell, span, elements))
        line = 1
        for cell in self.cells:
            cell.first_line = line
            line += len(cell.program_lines)

    @property
    def program(self) -> str:
        return "".join(line for cell in self.cells for line in cell.program_lines)

    def _cell_sources(self, cells: list):
        """Each cell with the span of its `source` value in the text (None for non-code cells)."""
        spans = list(_members(self.text, _skip(self.text, 0)))
        cells_at = [start for key, start, _ in spans if key == "cells"][-1]  # the last duplicate wins, as in json.loads
        for index, (start, _end) in enumerate(_elements(self.text, cells_at)):
            cell = cells[index]
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                yield None, (0, 0), []
                continue
            source = cell.get("source", "")
            if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
                raise NotebookError(f"cell {index + 1}: its source is neither a string nor a list of strings")
            found = [(s, e) for key, s, e in _members(self.text, start) if key == "source"]
            if not found:
                yield None, (0, 0), []
                continue
            span = found[-1]
            elements = list(_elements(self.text, span[0])) if isinstance(source, list) else []
            yield source, span, elements

    # ---- findings -------------------------------------------------------------------------

    def locate(self, line: int) -> tuple[Cell | None, int]:
        for cell in reversed(self.cells):
            if line >= cell.first_line:
                return cell, line - cell.first_line + 1
        return None, line

    def finding_in_cells(self, finding: Finding) -> Finding:
        cell, line = self.locate(finding.line)
        if cell is None:
            return finding
        end_line = max(line, finding.end_line - cell.first_line + 1)
        fix = finding.fix
        if fix is not None:
            fix = replace(
                fix,
                edits=tuple(
                    replace(
                        e,
                        start_position=(e.start_position[0] - cell.first_line + 1, e.start_position[1]),
                        end_position=(e.end_position[0] - cell.first_line + 1, e.end_position[1]),
                    )
                    for e in fix.edits
                ),
            )
        evidence = tuple(self._evidence_in_cells(e, finding.path) for e in finding.evidence)
        return replace(finding, line=line, end_line=end_line, cell=cell.number, fix=fix, evidence=evidence)

    def _evidence_in_cells(self, evidence: Evidence, path: str) -> Evidence:
        """A fact read from the notebook's own program moves to its cell, as the finding does."""
        if evidence.path != path or evidence.cell is not None:
            return evidence
        cell, line = self.locate(evidence.line)
        return evidence if cell is None else replace(evidence, line=line, cell=cell.number)

    # ---- writing back ---------------------------------------------------------------------

    def with_program(self, program: str) -> bytes:
        """The notebook's bytes with each code cell's source taken from ``program``."""
        new_cells = self._split(program)
        pieces: list[str] = []
        cursor = 0
        for cell, lines in zip(self.cells, new_cells):
            source = _restore_magics(cell, lines)
            if source == cell.source:
                continue
            pieces.append(self.text[cursor : cell.span[0]])
            pieces.append(self._source_json(cell, source))
            cursor = cell.span[1]
        pieces.append(self.text[cursor:])
        body = "".join(pieces)
        return (codecs.BOM_UTF8 if self.bom else b"") + body.encode("utf-8")

    def _split(self, program: str) -> list[list[str]]:
        """The new program's lines, cut where the old program's cells began."""
        old = [line for cell in self.cells for line in cell.program_lines]
        new = _LINES.findall(program)
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        opcodes = matcher.get_opcodes()
        cuts = []
        for cell in self.cells:
            cuts.append(_new_index(cell.first_line - 1, opcodes, cell.number))
        cuts.append(len(new))
        return [new[cuts[i] : cuts[i + 1]] for i in range(len(self.cells))]

    def _source_json(self, cell: Cell, source: str) -> str:
        def dumps(value: str) -> str:
            return json.dumps(value, ensure_ascii=self.ensure_ascii)

        if not cell.is_list:
            return dumps(source)
        lines = _LINES.findall(source)  # not splitlines(): a \u2028 inside a line stays in it
        if not lines:
            return "[]"
        # Unchanged lines keep their exact spelling (escapes and all).
        spelled = {json.loads(self.text[s:e]): self.text[s:e] for s, e in cell.elements}
        items = [spelled.get(line) or dumps(line) for line in lines]
        start, end = cell.span
        elements = cell.elements
        if elements:
            opening = self.text[start + 1 : elements[0][0]]
            closing = self.text[elements[-1][1] : end - 1]
            # The separators as written, in order; new lines take the last one.
            between = [self.text[a[1] : b[0]] for a, b in zip(elements, elements[1:])] or ["," + opening]
        else:
            line_start = self.text.rfind("\n", 0, start) + 1
            rest = self.text[line_start:]
            indent = rest[: len(rest) - len(rest.lstrip(" \t"))]
            opening, closing = "\n" + indent + " ", "\n" + indent
            between = ["," + opening]
        body = items[0] + "".join(between[min(i, len(between) - 1)] + item for i, item in enumerate(items[1:]))
        return "[" + opening + body + closing + "]"


def cell_from(number: int, source: str | list[str], span: tuple[int, int], elements: list) -> Cell:
    text = "".join(source) if isinstance(source, list) else source
    lines = _LINES.findall(text)
    magics: list[tuple[str, str]] = []
    if lines and not _compiles(text):
        lines, magics = _without_magics(lines)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return Cell(number, text, isinstance(source, list), span, elements, lines, magics)


def _without_magics(lines: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    first = lines[0].strip()
    if first.startswith("%%") and (first[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
        # A cell magic that runs another language (%%bash, %%writefile): none of it is Python.
        return [CELL_MAGIC_PLACEHOLDER + _line_break(line) for line in lines], [(line, "") for line in lines]
    out: list[str] = []
    magics: list[tuple[str, str]] = []
    continued = False
    indent = ""
    for line in lines:
        if continued or _MAGIC.match(line):
            if not continued:  # the lines that continue a magic stand at its indentation
                indent = line[: len(line) - len(line.lstrip(" \t"))]
            out.append(indent + PLACEHOLDER + _line_break(line))
            magics.append((line, indent))
            continued = line.rstrip("\r\n").endswith("\\")  # `!pip install a \` goes on
        else:
            out.append(line)
    return out, magics


def _restore_magics(cell: Cell, lines: list[str]) -> str:
    if cell.program_lines and cell.program_lines[0].startswith(CELL_MAGIC_PLACEHOLDER):
        if lines != cell.program_lines:
            raise NotebookError(f"cell {cell.number}: a fix changed a cell that is an IPython cell magic; not written")
        return cell.source
    magics = iter(cell.magics)
    out: list[str] = []
    for line in lines:
        match = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if match is None:
            out.append(line)
            continue
        magic = next(magics, None)
        if magic is None:
            raise NotebookError(f"cell {cell.number}: a fix moved an IPython magic line; not written")
        original, old_indent = magic
        # A fix that indented the block (a guard) indents the magic with it.
        shifted = original.startswith(old_indent) and match.group("indent") != old_indent
        body = match.group("indent") + original[len(old_indent) :] if shifted else original
        out.append(body.rstrip("\r\n") + _line_break(line))
    if next(magics, None) is not None:
        raise NotebookError(f"cell {cell.number}: a fix removed an IPython magic line; not written")
    text = "".join(out)
    if not cell.source.endswith(("\n", "\r")) and text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]  # the newline the program added
    return text


def _new_index(old_index: int, opcodes, number: int) -> int:
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 == old_index:
            return j1  # lines inserted at a cell's start belong to that cell (a guard, say)
        if i1 < old_index < i2:
            if tag == "equal":
                return j1 + old_index - i1
            raise NotebookError(f"a fix spans cell {number} and the cell before it; not written")
    return opcodes[-1][4] if opcodes else 0


def _line_break(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _is_python(metadata: object) -> bool:
    """Whether the kernel runs Python (an R or Julia notebook is not ours to read)."""
    if not isinstance(metadata, dict):
        return True
    for section, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(section, {}).get(key) if isinstance(metadata.get(section), dict) else None
        if isinstance(value, str):
            return value.lower() == "python"
    return True


# ---- offsets of values in JSON text (json.loads has already accepted it) ----------------------

_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _value_end(text: str, pos: int) -> int:
    return _DECODER.raw_decode(text, pos)[1]


def _members(text: str, pos: int):
    """(key, start, end) of each member of the object that starts at ``pos``."""
    pos = _skip(text, pos + 1)
    while text[pos] != "}":
        # scanstring is public in CPython's json.decoder; typeshed leaves it out.
        key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        pos = _skip(text, _skip(text, pos) + 1)  # past the colon
        end = _value_end(text, pos)
        yield key, pos, end
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)


def _elements(text: str, pos: int):
    """(start, end) of each element of the array that starts at ``pos``."""
    pos = _skip(text, pos + 1)
    while text[pos] != "]":
        end = _value_end(text, pos)
        yield pos, end
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)


class NotebookDocument:
    """A notebook's code cells as one program; findings and fixes go back to their cells."""

    def __init__(self, notebook: Notebook, display: str, filename: str) -> None:
        self.notebook = notebook
        self.source = SourceFile(text=notebook.program, display_path=display)
        self.linted_as = filename + ".py"  # the code cells are Python: the Python rules read them

    def map_back(self, finding: Finding) -> Finding:
        return self.notebook.finding_in_cells(finding)

    def encode(self, text: str) -> bytes:
        try:
            return self.notebook.with_program(text)
        except NotebookError as exc:
            raise EncodeError(str(exc)) from None

    def diff_texts(self, new_text: str, new_bytes: bytes) -> tuple[str, str]:
        return self.notebook.text, new_bytes.decode("utf-8-sig" if self.notebook.bom else "utf-8")


class NotebookKind:
    name = "notebook"
    is_python = False  # the file is JSON; its code cells are Python
    always_read = True
    # A notebook's outputs (plots, logs) may be large; its code is what the limit is about (the
    # pipeline holds the program itself to the plain limit).
    size_factor = 16
    includes_files = False

    def taken_by_walk(self, path: PurePath) -> bool:
        return True

    def decode(self, data: bytes, display: str, filename: str, path: Path | None = None) -> NotebookDocument | None:
        # ``path`` is not given to the program: the cells are not a module of the project.
        try:
            notebook = Notebook(data)
        except NotebookError as exc:
            raise Unreadable(f"cannot read notebook: {exc}") from None
        if not notebook.is_python or not notebook.cells:
            return None
        return NotebookDocument(notebook, display, filename)

    def validate(self, before: SourceFile, after_text: str) -> str | None:
        return PYTHON.validate(before, after_text)

    def __repr__(self) -> str:
        return f"<input kind {self.name}>"


NOTEBOOK = NotebookKind()
