"""A module cut down to what one of its definitions needs.

A fact that answers for each definition on its own (``ModuleFact(..., per_definition=True)``) is
computed, for a question about one function or class, on a slice of the module instead of all of
it: a 6,000-line utility module whose three functions a training script calls is parsed as a few
hundred lines.

The slice keeps, in the module's order:

- every top-level statement that must stay: a ``*`` or ``__future__`` import, one that imports
  inside it (``try: import deepspeed``), declares a global, or matches;
- every definition that holds a ``global`` statement: it may bind a global the asked one reads;
- the asked definition, every top-level statement that binds a name a kept statement spells (a
  definition it calls, a base class, a decorator, an import of a name it reads; module-level code
  that assigns a global it reads), and every statement that spells the name of a definition so
  reached (its callers: the rank flows read a parameter as what the callers pass), until nothing
  new is named. What the statements that stay reach is kept too, without its callers. An import
  is kept when a kept statement spells any word of it: the flows read the names it binds, and
  the names it imports them from as names handed on (``from .losses import summarize as s``
  hands on a method ``summarize`` of the module);
- every statement that spells ``self.x`` when a kept statement calls ``self.x(...)``: the flows
  know such a call when any statement of the module stores to ``self.x``.

Module-level code that binds nothing kept reads (a docstring, ``logging.basicConfig()``, a table
no kept statement names) is left out. The flows find a function by its name alone, a method's
too, and refuse one defined twice: a kept statement keeps every other statement that defines one
of the names it defines (an unrelated class's ``forward`` beside a kept class's) once that name
is one the flows may look up: one a kept statement calls (``f(...)``, ``x.f(...)``), an asked
name, or a name an asked class defines (every class of the name). Until then the other
definitions do not matter: an unrelated class's ``__init__`` is not kept for a nested class's
``__init__`` that nothing calls by name.

Names are read from the code as words, with comments and strings other than f-strings left
out (an f-string's replacement fields are code; see :func:`_code`), so ``# unlike helper()`` or
``parser.add_argument("--default")`` keeps nothing; every name LibCST reads as a ``Name`` is such
a word (a keyword argument's and a parameter's name too). A call is read as :func:`may_call`
says.

What the asked definition reaches, and what reaches it, is there, so a fact that follows calls
within the module answers for it as on the whole module, nearly always. The whole module's
analyses also read names by their spelling across unrelated code (a local ``who`` bound to the
rank in one function makes ``who`` a rank in another; ``self.rank`` in a LoRA class is a matrix
rank in every class), which a slice leaves out: the definition is then read with what it reaches
alone. ``benchmarks/slice_equivalence.py`` asked 21,842 questions of 1,697 modules of the
precision benchmark's projects both ways and found no such difference; the project index reads a
definition from its slice only when the slice is under a quarter of the module, and decides that
from the module's content alone, so the answer never depends on what was asked before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from trllint.semantic.project.outline import ModuleOutline

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_WORD = re.compile(r"\w+")
# A comment, or a string literal. Read left to right, a `#` or a quote inside a literal belongs
# to it; each branch starts with its character, which `re` scans for.
_NOT_CODE = re.compile(
    r"#[^\r\n]*"
    r"|'''(?:[^'\\]++|\\(?:\r\n|.)|'(?!''))*+'''"
    r'|"""(?:[^"\\]++|\\(?:\r\n|.)|"(?!""))*+"""'
    r"|'(?:[^'\\\r\n]++|\\(?:\r\n|.))*+'"
    r'|"(?:[^"\\\r\n]++|\\(?:\r\n|.))*+"',
    re.DOTALL,
)
_QUOTES = str.maketrans("\'\"", "  ")


def _code(text: str) -> str:
    """The statement ``text`` without its comments and its strings other than f-strings (and
    t-strings), whose replacement fields are code: what its words are read from. All of ``text``
    when that cannot be read this way: from Python 3.12 a replacement field may hold its string's
    own quote or a line break. The regex then ends the f-string inside a field (``_fields_close``
    says so) or leaves a quote it could not pair."""
    unread: list[bool] = []

    def code_only(match: re.Match[str]) -> str:
        literal = match.group()
        if literal[0] == "#" or not _formatted(match):
            return ""
        if not _fields_close(literal):
            unread.append(True)
        return literal.translate(_QUOTES)

    code = _NOT_CODE.sub(code_only, text)
    return text if unread or "'" in code or '"' in code else code


def _fields_close(literal: str) -> bool:
    """Every replacement field of the f-string ``literal`` (quote to quote) closes before it ends,
    read as Python 3.11 reads one: ``{{`` and ``}}`` outside a field are text; inside one, a
    string runs to its next quote, and braces nest. False is also the answer for what that
    reading cannot follow (a backslash in a field's string), which only reads more."""
    quote = literal[:3] if literal[:3] in ("'''", '"""') else literal[0]
    body, depth, i = literal[len(quote) : -len(quote)], 0, 0
    while i < len(body):
        char = body[i]
        if depth == 0:
            if char == "\\" or body.startswith(("{{", "}}"), i):
                i += 2
                continue
            depth += char == "{"
        elif char in "'\"":
            end = body.find(char, i + 1)
            if end < 0:
                return False
            i = end
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        i += 1
    return depth == 0


def _formatted(match: re.Match[str]) -> bool:
    """The literal has an ``f`` or ``t`` prefix: the letters right before its quote (two at most)
    that start a word. After a keyword (``return"x"``) there is none; ``if"x"`` reads as one,
    which reads more."""
    text, start = match.string, match.start()
    first = start
    while first > max(0, start - 2) and text[first - 1].isascii() and text[first - 1].isalpha():
        first -= 1
    if first > 0 and (text[first - 1].isalnum() or text[first - 1] == "_"):
        return False
    return any(letter in "fFtT" for letter in text[first:start])


def may_call(code: str, name: str) -> bool:
    """``code`` may call ``name`` (``name(...)``, ``x.name(...)``): the word, then ``(`` past
    spaces, a line continuation or a closing bracket (``(name)(x)``), other than as the name a
    ``def`` or a ``class`` defines. More than the calls (a word before ``(`` in an f-string's
    text), never fewer."""
    word = re.escape(name)
    # The name first, then the look-behind: `re` scans for the literal (trllint.facts.markers).
    for match in re.finditer(rf"{word}(?<!\w{word})[\s\\)]*\(", code):
        if not _DEFINED_HERE.search(code, max(0, match.start() - 40), match.start()):
            return True
    return False


# Right before a name: the `def` or `class` that defines it (a run of continued lines past forty
# characters reads as a call: more, never fewer).
_DEFINED_HERE = re.compile(r"(?<!\w)(?:def|class)[\s\\]+$")
# `self.<attribute>`, the literal first (trllint.facts.markers).
_SELF_ATTRIBUTE = re.compile(r"self(?<!\wself)[\s\\]*\.[\s\\]*(\w+)")


@dataclass(frozen=True)
class ModuleSlice:
    text: str
    lines: int  # how many of the module's lines it keeps
    total: int  # the module's lines


class ModuleCutter:
    """One module's statements, and the words each spells, read once for all its slices."""

    def __init__(self, text: str, outline: ModuleOutline) -> None:
        # A lone carriage return: CPython's line numbers and these lines may count apart.
        lone_return = "\r" in text and text.count("\r") != text.count("\r\n")
        self.statements = () if lone_return else outline.statements
        self.lines: list[str] = _LINE.findall(text)
        self.classes = frozenset(outline.classes)  # the names of its top-level classes
        # A statement's lines hold its whole literals: each is read on its own.
        self.code = [_code("".join(self.lines[s.first - 1 : s.last])) for s in self.statements]
        self.words: list[frozenset[str]] = [frozenset(_WORD.findall(chunk)) for chunk in self.code]
        self._calls: dict[int, frozenset[str]] = {}
        # The attributes each statement spells on `self` (`self.model`), and the reverse.
        self.self_attributes: list[frozenset[str]] = [frozenset(_SELF_ATTRIBUTE.findall(chunk)) for chunk in self.code]
        self.self_spelling: dict[str, list[int]] = {}
        for i, attributes in enumerate(self.self_attributes):
            for attribute in attributes:
                self.self_spelling.setdefault(attribute, []).append(i)
        # word -> the statements that spell it (a call of a function, a use of a class)
        self.spelling: dict[str, list[int]] = {}
        # word -> the top-level statements that bind it: a definition of that name, or module-level
        # code that assigns it
        self.binding: dict[str, list[int]] = {}
        # name -> the statements that define a function or class of that name, at the top or
        # inside (a method, a nested function)
        self.defining: dict[str, list[int]] = {}
        for i, statement in enumerate(self.statements):
            for name in (statement.defines,) if statement.defines is not None else statement.binds or ():
                self.binding.setdefault(name, []).append(i)
            for name in statement.definitions:
                self.defining.setdefault(name, []).append(i)
            for word in self.words[i]:
                self.spelling.setdefault(word, []).append(i)
        # The names more than one statement defines: only for these can another definition matter.
        self.shared = frozenset(name for name, found in self.defining.items() if len(found) > 1)
        self.cuttable = bool(self.statements) and self.statements[-1].last <= len(self.lines) and all(
            later.first > earlier.last for earlier, later in zip(self.statements, self.statements[1:])
        )

    def self_calls(self, i: int) -> frozenset[str]:
        """The attributes statement ``i`` may call on ``self`` (``self.model(x)``)."""
        return frozenset(a for a in self.self_attributes[i] if may_call(self.code[i], a))

    def calls(self, i: int) -> frozenset[str]:
        """The ``shared`` names statement ``i`` may call: the flows look a definition up by these.
        Read for the statements a slice keeps alone."""
        if i not in self._calls:
            code = self.code[i]
            self._calls[i] = frozenset(name for name in self.words[i] & self.shared if may_call(code, name))
        return self._calls[i]

    def slice(self, roots: Iterable[str]) -> ModuleSlice | None:
        """The module cut down to what the definitions named ``roots`` need; None when it cannot
        be cut along its statements' lines (two share a line: ``x = 1; y = 2``)."""
        if not self.cuttable:
            return None
        statements = self.statements
        roots = tuple(roots)
        # First what the asked definitions reach, with the statements that call or name each
        # definition reached (a parameter is read as what its callers pass); then what the
        # module-level code reaches.
        asked = [i for name in roots for i in self.binding.get(name, ()) if statements[i].defines == name]
        # The flows answer for the asked definition by its name, and for an asked class's methods
        # by theirs (every class of the name: a module may define one twice).
        looked_up = {*roots, *(name for i in asked if statements[i].defines in self.classes for name in statements[i].definitions)}
        reached = self._reach(asked, set(), looked_up, callers=True)
        base = [i for i, s in enumerate(statements) if (s.defines is None and s.binds is None) or s.declares_global]
        kept = self._reach(base, reached, looked_up, callers=False)
        chunks: list[str] = []
        count = 0
        for i in sorted(kept):
            statement = statements[i]
            chunk = "".join(self.lines[statement.first - 1 : statement.last])
            chunks.append(chunk if chunk.endswith(("\n", "\r")) else chunk + "\n")
            count += statement.last - statement.first + 1
        return ModuleSlice("".join(chunks), count, len(self.lines))

    def _reach(self, pending: list[int], kept: set[int], looked_up: set[str], *, callers: bool) -> set[int]:
        """``kept`` grown by ``pending`` and every top-level statement that binds a word they
        spell (a definition of that name, module-level code that assigns it); with ``callers``,
        every statement that spells the name of a definition reached too. ``looked_up``: the
        names the kept statements call or the asked definitions define, grown here."""
        while pending:
            i = pending.pop()
            if i in kept:
                continue
            kept.add(i)
            for word in self.words[i]:
                pending.extend(self.binding.get(word, ()))
            # The flows find a function by its name alone (a method's too), and read none that is
            # defined twice: every definition of a name they may look up stays with the others.
            statement = self.statements[i]
            for name in self.calls(i) - looked_up:
                looked_up.add(name)
                definitions = self.defining.get(name, ())
                if any(j in kept for j in definitions):
                    pending.extend(definitions)
            for name in statement.definitions & looked_up:
                pending.extend(self.defining.get(name, ()))
            # `self.model(x)` is known to the flows when any statement of the module stores to
            # `self.model` (a class of the module it never names may): each that spells it stays.
            for attribute in self.self_calls(i):
                pending.extend(self.self_spelling.get(attribute, ()))
            if callers and statement.defines is not None:
                pending.extend(self.spelling.get(statement.defines, ()))
        return kept


def slice_of(text: str, outline: ModuleOutline, roots: Iterable[str]) -> ModuleSlice | None:
    """The module ``text`` (outlined as ``outline``) cut down to what the definitions named
    ``roots`` need; None when it cannot be cut along its statements' lines."""
    return ModuleCutter(text, outline).slice(roots)
