"""A notebook cell's IPython syntax turned into Python line for line, as the kernel reads it.

IPython rewrites a cell before Python compiles it (``InteractiveShell.transform_cell``):

1. *cleanup*: leading blank lines are dropped, the indentation common to every line is removed,
   and ``>>>`` / ``...`` (doctest) and ``In [1]:`` / ``...:`` prompts are cut;
2. a cell that starts with ``%%name`` is one cell magic: all of it goes to the magic;
3. *token transforms*, one logical line at a time: ``%magic``, ``!shell``, ``!!shell``,
   ``?obj`` / ``??obj``, ``,f a b`` / ``;f a b`` / ``/f a b`` at the start of a line (continued
   with ``\\``), ``x = %magic ...`` and ``x = !cmd``, and ``obj?`` / ``obj.attr??`` at its end;
4. *automagic*, for a cell of exactly one line: a line whose first word names a line magic or an
   alias (``pip install x``, ``cd ..``, ``ls -la``) runs it, unless that word is bound in the
   user's namespace, a builtin or a keyword, or the line assigns to it (``ls = []``, ``pip, x =
   ...``). A second line, even a comment, turns automagic off: such a cell is a syntax error.

Here every rewritten line becomes a placeholder (``pass``, at the line's indentation) and every
cut prefix is remembered, so the Python has as many lines as the cell, each where it was:
positions map back exactly and a fix can be put back around the placeholders.

Where IPython is installed, its own transformer (``IPython.core.inputtransformer2``) finds steps 1
to 3; elsewhere the rules below do, and tests/test_ipython_syntax.py holds them to IPython's on
the same cells. Automagic (step 4) needs the kernel's namespace, which no static reading has: the
names bound by the notebook's cells stand in for it.
"""

from __future__ import annotations

import builtins
import keyword
import re
import textwrap

from dataclasses import dataclass

PLACEHOLDER = "pass  # trllint: IPython magic"
# Cell magics whose body is Python run by the kernel, after IPython's own rewriting (`%%time`
# around a training loop): the magic line is a placeholder and the body is read as a cell.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

# IPython's line magics and its default POSIX aliases (IPython 9, InteractiveShell), and those
# the kernel adds (ipykernel's KernelMagics): the names automagic runs without a `%`.
LINE_MAGICS = frozenset(
    """
    alias alias_magic autoawait autocall automagic bookmark cat cd code_wrap colors conda config cp
    debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir lf lk ll load
    load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic mamba matplotlib
    micromamba mkdir mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint
    precision prun psearch psource pushd pwd pycat pylab quickref recall rehashx reload_ext rep rerun
    reset reset_selective rm rmdir run save sc set_env sx system tb time timeit unalias unload_ext uv
    who who_ls whos xdel xmode
    clear less more man connect_info qtconsole autosave
    """.split()
)
_NOT_AUTOMAGIC = frozenset(dir(builtins)) | frozenset(keyword.kwlist)

_ESCAPES = frozenset("!?%,;/")
# IPython's help-at-the-end pattern: a dotted name (or %magic), then ? or ??.
_HELP_END = re.compile(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$")
# IPython's split of a line into its first word and the rest (IPython.core.splitinput).
_LINE_SPLIT = re.compile(r"^(\s*)([,;/%]|!!?|\?\??)?\s*(%{0,2}[\w.*]*)(.*?$|$)")
_IPYTHON_PROMPT = re.compile(r"^(((\[nav\]|\[ins\])? )?In \[\d+\]: |\s*\.{3,}: ?)")
_DOCTEST_FIRST = re.compile(r"^\s*>>>")
_DOCTEST_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)[ \t]?")


@dataclass
class CellLines:
    """One cell as Python: as many lines as the cell, each ending in its own line break."""

    lines: list[str]
    cut: list[str]  # per line: what was cut from its start (a prompt, the common indentation)
    magic: list[bool]  # per line: IPython syntax, replaced by a placeholder
    cell_magic: str | None = None  # a cell magic's name, when the whole cell runs in it
    # The line magic that the cell's one line runs under automagic, unless its name is bound in
    # the notebook (the caller knows the names, and calls :meth:`run_automagic`).
    automagic: str | None = None
    _automagic_line: int = -1

    def run_automagic(self) -> None:
        self.replace(self._automagic_line, self._automagic_line)
        self.automagic = None

    def replace(self, first: int, last: int) -> None:
        """Placeholders for lines ``first`` to ``last``, at the indentation of the first."""
        line = self.lines[first]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        for index in range(first, last + 1):
            self.lines[index] = indent + PLACEHOLDER + line_break(self.lines[index])
            self.magic[index] = True


def cell_as_python(text: str) -> CellLines:
    """The cell's Python, line for line."""
    originals = LINES.findall(text)
    cell = CellLines(list(originals), [""] * len(originals), [False] * len(originals))
    rules: OwnRules | IPythonRules = ipython_rules() or OWN_RULES
    first = _first_code_line(cell, 0)
    if first is None:
        return cell
    _clean(cell, first, rules)
    head = cell.lines[first].rstrip("\r\n")
    if head.startswith("%%") and not re.match(r"%%\w+\?", head):
        name = head[2:].partition(" ")[0]
        if name not in PYTHON_CELL_MAGICS:
            cell.cell_magic = name
            return cell
        # The kernel reads the body as a cell of its own: cleanup, rewriting, automagic.
        cell.replace(first, first)
        first = _first_code_line(cell, first + 1)
        if first is None:
            return cell
        _clean(cell, first, rules)
    before = (list(cell.lines), list(cell.magic))
    try:
        rules.mark_special_lines(cell, first)
    except Exception:  # IPython's transformer failed on this cell: the own rules read it
        cell.lines, cell.magic = before
        OWN_RULES.mark_special_lines(cell, first)
    if first == len(cell.lines) - 1 and not cell.magic[first]:
        cell.automagic = automagic_name(cell.lines[first].rstrip("\r\n"))
        cell._automagic_line = first
    return cell


def _first_code_line(cell: CellLines, start: int) -> int | None:
    return next((i for i in range(start, len(cell.lines)) if cell.lines[i].strip()), None)


def automagic_name(line: str) -> str | None:
    """The line magic IPython's automagic would run for this one-line cell (its namespace aside)."""
    match = _LINE_SPLIT.match(line)
    if match is None:
        return None
    escape, word, rest = match.group(2), match.group(3).strip(), match.group(4).lstrip()
    if escape or word not in LINE_MAGICS or word in _NOT_AUTOMAGIC:
        return None
    if rest and rest[0] in "=,":  # an assignment to the name: Python's, not a magic
        return None
    return word


# ---- the rules, where IPython is not installed ----------------------------------------------


class OwnRules:
    """IPython's rewriting, read from the text: cleanup, then the special logical lines."""

    def clean(self, lines: list[str]) -> list[str]:
        lines = _dedent(lines)
        lines = _strip_doctest_prompts(lines)
        if _IPYTHON_PROMPT.match(lines[0]) or (len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1])):
            lines = [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
        return lines

    def mark_special_lines(self, cell: CellLines, first: int) -> None:
        lines = cell.lines
        index = first
        while index < len(lines):
            if lines[index].lstrip(" \t")[:1] in _ESCAPES:
                last, special = _continued_end(lines, index), True
            else:
                last, special = _logical_line(lines, index)
            if special:
                cell.replace(index, last)
            index = last + 1


def _dedent(lines: list[str]) -> list[str]:
    """IPython 9's ``leading_indent``: the indentation common to every line goes."""
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    return LINES.findall(dedented) if dedented != text else lines


def _strip_doctest_prompts(lines: list[str]) -> list[str]:
    """``>>>`` and ``...`` prompts (indented or not) when the cell has a ``>>>`` line outside a
    triple-quoted string; the stretches they were cut from are then dedented."""
    inside = _in_triple_quotes(lines)
    if not any(_DOCTEST_FIRST.match(line) and not masked for line, masked in zip(lines, inside)):
        return lines
    stripped = [line if masked else _DOCTEST_PROMPT.sub("", line, count=1) for line, masked in zip(lines, inside)]
    out: list[str] = []
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and inside[end] == inside[start]:
            end += 1
        segment = stripped[start:end]
        if not inside[start] and segment != lines[start:end]:
            segment = _dedent(segment)
        out.extend(segment)
        start = end
    return out


def _in_triple_quotes(lines: list[str]) -> list[bool]:
    """Which lines start inside a triple-quoted string (a string's own ``>>>`` is no prompt)."""
    marks: list[bool] = []
    quote: str | None = None
    for line in lines:
        marks.append(quote is not None)
        for match in re.finditer(r'(?<!\\)("""|\'\'\')', line):
            if quote is None:
                quote = match.group(1)
            elif quote == match.group(1):
                quote = None
    return marks


def _continued_end(lines: list[str], index: int) -> int:
    """The last line of the command at ``index``, continued with backslashes (IPython's
    ``find_end_of_continued_line``)."""
    while lines[index].endswith("\\\n") and index + 1 < len(lines):
        index += 1
    return index


def _logical_line(lines: list[str], start: int) -> tuple[int, bool]:
    """The last physical line of the logical line at ``start``, and whether IPython rewrites it:
    ``x = %magic ...`` / ``x = !cmd`` (to the command's backslash-continued end), or a ``?`` that
    ends it (``obj?``)."""
    assign_seen = False
    depth = 0
    quote: str | None = None
    last_char = ""
    index = start
    while True:
        line = lines[index]
        k, n = 0, len(line)
        in_comment = False
        while k < n:
            char = line[k]
            if quote is not None:
                if char == "\\":
                    k += 2
                    continue
                if line.startswith(quote, k):
                    k += len(quote)
                    quote, last_char = None, "'"
                    continue
                if len(quote) == 1 and char in "\r\n":
                    quote = None  # an unterminated string ends with its line (a syntax error)
                k += 1
                continue
            if char in "'\"":
                quote = char * 3 if line.startswith(char * 3, k) else char
                k += len(quote)
                continue
            if char == "#":
                in_comment, last_char = True, "#"
                break
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            elif char == "=" and depth == 0 and not assign_seen and _lone_equals(line, k):
                # IPython looks only after the first `=` of the line (``_find_assign_op``).
                assign_seen = True
                rest = line[k + 1 :].lstrip(" \t")
                if re.match(r"%[^\W\d]", rest) or (rest[:1] == "!" and not rest.startswith("!=")):
                    end = _continued_end(lines, index)
                    return end, True
            if not char.isspace():
                last_char = char
            k += 1
        more = index + 1 < len(lines)
        if more and (
            (quote is not None and len(quote) == 3)
            or (not in_comment and line.rstrip("\r\n").endswith("\\"))
            or depth > 0
        ):
            index += 1
            continue
        break
    if last_char == "?":
        content = "".join(lines[start : index + 1]).strip()
        return index, _HELP_END.search(content) is not None
    return index, False


def _lone_equals(line: str, k: int) -> bool:
    """Whether the ``=`` at ``k`` is an assignment's, not part of ``==``, ``<=``, ``+=``, ``:=``..."""
    before = line[k - 1] if k else ""
    after = line[k + 1 : k + 2]
    return after != "=" and (before == "" or before not in "=!<>:+-*/%&|^@")


OWN_RULES = OwnRules()


# ---- IPython's own transformer, where it is installed -----------------------------------------


class IPythonRules:
    """The same steps asked of IPython's ``TransformerManager``: its cleanup functions, and its
    token transformers' ``find`` (which logical line is special) and ``transform`` (how many lines
    it takes), with our placeholders put in place of IPython's calls, so lines keep their places."""

    def __init__(self, module) -> None:
        self.module = module
        manager = module.TransformerManager()
        self.cleanup = [t for t in manager.cleanup_transforms if t is not module.leading_empty_lines]
        self.token_transformers = list(manager.token_transformers)

    def clean(self, lines: list[str]) -> list[str]:
        for transform in self.cleanup:
            lines = transform(lines)
        return lines

    def mark_special_lines(self, cell: CellLines, first: int) -> None:
        work = cell.lines[first:]
        if work and not work[-1].endswith(("\n", "\r")):
            work[-1] += "\n"  # as transform_cell does: tokenizing wants a last line break
        for _ in range(500):  # IPython's TRANSFORM_LOOP_LIMIT
            tokens = self.module.make_tokens_by_line(work)
            found = [t for t in (cls.find(tokens) for cls in self.token_transformers) if t]
            for candidate in sorted(found, key=self.module.TokenTransformBase.sortby):
                try:
                    transformed = candidate.transform(list(work))
                except SyntaxError:
                    continue
                last = candidate.start_line + len(work) - len(transformed)
                cell.replace(first + candidate.start_line, first + last)
                work = cell.lines[first:]
                if not work[-1].endswith(("\n", "\r")):
                    work[-1] += "\n"
                break
            else:
                return


_IPYTHON: list[IPythonRules | None] = []


def ipython_rules() -> IPythonRules | None:
    if not _IPYTHON:
        try:
            from IPython.core import inputtransformer2
        except Exception:  # not installed, or broken: the own rules hold
            _IPYTHON.append(None)
        else:
            _IPYTHON.append(IPythonRules(inputtransformer2))
    return _IPYTHON[0]


def use_ipython(enabled: bool) -> None:
    """Switch IPython's transformer off (tests of the own rules) or back on."""
    _IPYTHON.clear()
    if not enabled:
        _IPYTHON.append(None)


# ---- shared -----------------------------------------------------------------------------------

LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def line_break(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _clean(cell: CellLines, first: int, rules: OwnRules | IPythonRules) -> None:
    """Cleanup from line ``first`` on; what is cut from a line's start is kept in ``cell.cut``."""
    before = cell.lines[first:]
    try:
        after = rules.clean(list(before))
    except Exception:
        after = OWN_RULES.clean(list(before))
    if len(after) != len(before):
        after = OWN_RULES.clean(list(before))  # a cleanup that took lines away: ours keeps them
    for offset, (old, new) in enumerate(zip(before, after)):
        old_body, new_body = old.rstrip("\r\n"), new.rstrip("\r\n")
        if not new_body.strip() or not old_body.endswith(new_body):
            continue  # a blank line, whatever its spaces, means nothing to Python
        cut = old_body[: len(old_body) - len(new_body)]
        cell.cut[first + offset] += cut
        cell.lines[first + offset] = old[len(cut) :]
