"""Jupyter notebooks: the code cells linted as one program, findings and fixes mapped back to cells.

The code cells, in order, make one Python program, so a model prepared in cell 2 and read in
cell 5 is seen as it runs. Each cell is first read as the kernel reads it
(trllint.engine.inputs.ipython_syntax): IPython's syntax (``%time``, ``!pip``, ``x = !ls``,
``obj?``, a one-line ``pip install x`` under automagic) becomes a ``pass`` placeholder (a
statement, so an indented block that held one still parses), each line of a cell magic in another
language a comment (the body of ``%%time`` is Python, and linted), prompts and a common
indentation are cut; all is put back on write. A cell that still does not parse is one TRL000 in
that cell, and its lines are comments in the program, so the other cells are linted without it.
A fix is written by
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
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from trllint.core.findings import Evidence, Finding
from trllint.core.source import SourceFile
from trllint.core.syntax import blocking_error
from trllint.core.target_version import TargetVersion
from trllint.engine.inputs.kind import EncodeError, Unreadable
from trllint.engine.inputs.ipython_syntax import LINES, PLACEHOLDER, CellLines, cell_as_python, line_break
from trllint.engine.inputs.python import PYTHON

# Each line of a cell magic in another language (%%bash, %%writefile) or of a cell that does not
# parse: comments, since its indentation means nothing to Python.
CELL_MAGIC_PLACEHOLDER = "# trllint: IPython cell magic"
UNPARSED_PLACEHOLDER = "# trllint: cell not linted, it does not parse (TRL000)"
_PLACEHOLDER_LINE = re.compile(r"^(?P<indent>[ \t]*)" + re.escape(PLACEHOLDER) + r"$")
_LINES = LINES
_WHITESPACE = re.compile(r"[ \t\n\r]*")


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
    cut: list[str] = field(default_factory=list)  # per line: the prompt or indentation cut from it
    # Why none of the cell is Python to the program (a cell magic, a cell that does not parse):
    # its program lines are comments, and a fix that touches them is not written.
    not_python: str | None = None
    error: Finding | None = None  # the cell's TRL000, its line counted in the cell

    def cut_at(self, line: int) -> str:
        """What was cut from the start of the cell's ``line`` (1-based): columns move by it."""
        return self.cut[line - 1] if 0 < line <= len(self.cut) else ""

    def in_cell(self, position: tuple[int, int]) -> tuple[int, int]:
        """A program (line, column) as the cell's."""
        line = position[0] - self.first_line + 1
        return line, position[1] + len(self.cut_at(line))


class Notebook:
    def __init__(self, data: bytes, target: TargetVersion | None = None, display: str = "<notebook>") -> None:
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
        self.target = _kernel_target(document.get("metadata"), target)
        target = self.target
        # Escapes of non-ASCII text (json.dumps's default) or the characters themselves (nbformat's).
        self.ensure_ascii = self.text.isascii() and bool(
            re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", self.text)
        )
        self.cells: list[Cell] = []
        read: list[CellLines | None] = []
        for number, (cell, span, elements) in enumerate(self._cell_sources(document["cells"]), start=1):
            if cell is not None:
                text = "".join(cell) if isinstance(cell, list) else cell
                # A cell that compiles is Python as it stands, unless it is one line that
                # automagic may run (``ls -la`` is Python too).
                one_line = sum(1 for line in _LINES.findall(text) if line.strip()) <= 1
                python = cell_as_python(text) if one_line or not _compiles(text) else None
                self.cells.append(Cell(number, text, isinstance(cell, list), span, elements, [], []))
                read.append(python)
        _run_automagic(self.cells, read)
        for cell, python in zip(self.cells, read):
            _settle(cell, python, target, display)
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
                        start_position=cell.in_cell(e.start_position),
                        end_position=cell.in_cell(e.end_position),
                    )
                    for e in fix.edits
                ),
            )
        evidence = tuple(self._evidence_in_cells(e, finding.path) for e in finding.evidence)
        return replace(
            finding,
            line=line,
            end_line=end_line,
            column=finding.column + len(cell.cut_at(line)),
            end_column=finding.end_column + len(cell.cut_at(end_line)),
            cell=cell.number,
            fix=fix,
            evidence=evidence,
        )

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


def _run_automagic(cells: list[Cell], read: list[CellLines | None]) -> None:
    """Automagic for the one-line cells that name a line magic, unless a cell above binds that
    name (the kernel's namespace, read from the cells in order): ``ls -la`` runs ``%ls`` where no
    cell before it assigns ``ls``."""
    if not any(python is not None and python.automagic for python in read):
        return
    bound: set[str] = set()  # by the cells above, as the kernel runs them in order
    for cell, python in zip(cells, read):
        if python is not None and python.automagic:
            if python.automagic not in bound:
                python.run_automagic()
            continue
        tree = _tree("".join(python.lines) if python is not None else cell.source)
        if tree is not None:
            bound |= _bound_names(tree)


def _settle(cell: Cell, python: CellLines | None, target: TargetVersion | None, display: str) -> None:
    """The cell's program lines: its Python, or comments when it is no Python to the program."""
    lines = _LINES.findall(cell.source) if python is None else python.lines
    cell.cut = [""] * len(lines) if python is None else python.cut
    if python is not None and python.cell_magic is not None:
        cell.not_python = f"an IPython cell magic (%%{python.cell_magic})"
    elif python is not None:
        text = "".join(lines)
        error = None if _compiles(text) else blocking_error(SourceFile(text, display), target)
        if error is not None:
            cell.not_python, cell.error = "a cell that does not parse", error
    if cell.not_python is not None:
        placeholder = CELL_MAGIC_PLACEHOLDER if cell.error is None else UNPARSED_PLACEHOLDER
        cell.program_lines = [placeholder + line_break(line) for line in lines]
        cell.magics = []
        cell.cut = [""] * len(lines)
    else:
        cell.program_lines = list(lines)
        originals = _LINES.findall(cell.source)
        cell.magics = [
            (original, line[: len(line) - len(line.lstrip(" \t"))])
            for original, line, is_magic in zip(originals, lines, python.magic if python else [False] * len(lines))
            if is_magic
        ]
    if cell.program_lines and not cell.program_lines[-1].endswith(("\n", "\r")):
        cell.program_lines[-1] += "\n"


def _tree(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _bound_names(tree: ast.Module) -> set[str]:
    """The names a cell binds in the kernel's namespace (not inside a function or a class)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return names


def _restore_magics(cell: Cell, lines: list[str]) -> str:
    if cell.not_python is not None:
        if lines != cell.program_lines:
            raise NotebookError(f"cell {cell.number}: a fix changed {cell.not_python}; not written")
        return cell.source
    cuts = any(cell.cut)
    if cuts and len(lines) != len(cell.program_lines):
        raise NotebookError(
            f"cell {cell.number}: a fix added or removed lines in a cell whose prompts or indentation IPython cuts; not written"
        )
    magics = iter(cell.magics)
    out: list[str] = []
    for index, line in enumerate(lines):
        match = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if match is None:
            out.append((cell.cut[index] if cuts else "") + line)
            continue
        magic = next(magics, None)
        if magic is None:
            raise NotebookError(f"cell {cell.number}: a fix moved an IPython magic line; not written")
        original, old_indent = magic
        # A fix that indented the block (a guard) indents the magic with it.
        shifted = not cuts and original.startswith(old_indent) and match.group("indent") != old_indent
        body = match.group("indent") + original[len(old_indent) :] if shifted else original
        out.append(body.rstrip("\r\n") + line_break(line))
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
            # Lines changed one for one (fixes on the last line of a cell and the first of the
            # next, which difflib joins in one block) keep the cut between them.
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                return j1 + old_index - i1
            raise NotebookError(f"a fix spans cell {number} and the cell before it; not written")
    return opcodes[-1][4] if opcodes else 0


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _kernel_target(metadata: object, target: TargetVersion | None) -> TargetVersion | None:
    """An assumed target (the running interpreter) raised to the Python the notebook last ran on
    (``language_info.version``, which Jupyter records): a notebook that ran on Colab's 3.12 may use
    3.12's f-strings. Never lowered: that version says where it ran, not the oldest it supports."""
    if target is None or not target.assumed or not isinstance(metadata, dict):
        return target
    info = metadata.get("language_info")
    recorded = info.get("version") if isinstance(info, dict) else None
    match = re.match(r"(\d+)\.(\d+)", recorded) if isinstance(recorded, str) else None
    if match is None:
        return target
    version = (int(match.group(1)), int(match.group(2)))
    if version <= target.version:
        return target
    return TargetVersion(version, f"the Python the notebook last ran on, {recorded} in its metadata", assumed=True)


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
        self.target = notebook.target
        # A TRL000 for each cell that does not parse, on its program lines (comments to the rules).
        self.unlinted = [
            replace(cell.error, path=display, line=cell.first_line + cell.error.line - 1,
                    end_line=cell.first_line + cell.error.end_line - 1)
            for cell in notebook.cells
            if cell.error is not None
        ]

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

    def decode(
        self, data: bytes, display: str, filename: str, path: Path | None = None, target: TargetVersion | None = None
    ) -> NotebookDocument | None:
        # ``path`` is not given to the program: the cells are not a module of the project.
        try:
            notebook = Notebook(data, target, display)
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
