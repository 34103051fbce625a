"""A module cut down to what one of its definitions needs.

A fact that answers for each definition on its own (``ModuleFact(..., per_definition=True)``) is
computed, for a question about one function or class, on a slice of the module instead of all of
it: a 6,000-line utility module whose three functions a training script calls is parsed as a few
hundred lines.

The facts so answered are the rank flows' (trllint.facts.rank_flow), and the slice keeps what
they read, in the module's order:

- every top-level statement that must stay: a ``*`` or ``__future__`` import, or one that
  declares a global or matches;
- every definition that holds a ``global`` statement: it may bind a global the asked one reads;
- the asked definition, and every top-level statement that binds a name a kept statement reads:
  module-level code that assigns a global it spells, an import of a word it spells (at the top
  or inside such code: ``try: import deepspeed``; the flows
  read the names an import binds, and the names it imports them from as names handed on: ``from
  .losses import summarize as s`` hands on a method ``summarize`` of the module), a function it
  names where the flows read a name (:func:`reads`), a class it names as a class's base;
- every definition of a name a kept statement may look up (``f(...)``, ``self.f(...)``: see
  :func:`may_look_up`), of a name asked, and of a method of an asked class (every class of the
  name): the flows find a function by its name alone, a method's too, and refuse one defined
  twice. ``obj.f(...)`` and ``super().f(...)`` look nothing up, and ``Dataset(...)`` builds a
  class, which is no function;
- the callers of the asked definitions, of each top-level definition reached with them and of
  every name looked up (the flows read a parameter as what the callers pass): where a definition
  is called or handed on by its own name (not ``os.path.exists(p)`` for a function ``exists``,
  nor ``default=`` for ``default``; a method also on ``self``, ``cls`` or, read as a value,
  another object), and a class's subclasses, which call its methods on ``self``. What the
  statements that must stay reach is kept too, without its callers;
- every statement that spells ``self.x`` when a kept statement calls ``self.x(...)``: the flows
  know such a call when any statement of the module stores to ``self.x``.

Module-level code that binds nothing kept reads (a docstring, ``logging.basicConfig()``, a table
no kept statement names) is left out, and so is a class that a kept statement only names (an
annotation, ``Dataset(...)``) and whose methods it does not call.

Names are read from the code as words, with comments and strings other than f-strings left
out (an f-string's replacement fields are code; see :func:`_code`), so ``# unlike helper()`` or
``parser.add_argument("--default")`` keeps nothing; every name LibCST reads as a ``Name`` is such
a word. Where a word is read as a call, a look-up or a value is decided from the text around it
(:func:`may_call`, :func:`may_look_up`, :func:`reads`): always at least where the flows read it.

What the asked definition reaches, and what reaches it, is there, so a fact that follows calls
within the module answers for it as on the whole module, nearly always. The whole module's
analyses also read names by their spelling across unrelated code (a local ``who`` bound to the
rank in one function makes ``who`` a rank in another; ``self.rank`` in a LoRA class is a matrix
rank in every class), which a slice leaves out: the definition is then read with what it reaches
alone. ``benchmarks/slice_equivalence.py`` asked modules of the precision benchmark's projects
both ways: 12,490 questions of 987 modules, all answered alike (11,514 of 905 after the last
change). The project index reads a definition from its slice only when the slice is under half
of the module (``ModuleSlice.worth_reading``), and decides that from the module's content alone,
so the answer never depends on what was asked before.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Iterator


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
    if first > 0 and _is_word_character(text[first - 1]):
        return False
    return any(letter in "fFtT" for letter in text[first:start])


def may_call(code: str, name: str) -> bool:
    """``code`` may call ``name`` (``name(...)``, ``x.name(...)``): the word, then ``(`` past
    spaces, a line continuation or a closing bracket (``(name)(x)``), other than as the name a
    ``def`` or a ``class`` defines. More than the calls (a word before ``(`` in an f-string's
    text), never fewer."""
    return next(_calls(code, name), None) is not None


def may_look_up(code: str, name: str) -> bool:
    """``code`` may call ``name`` where the flows look a definition of the module up by its name:
    ``name(...)``, ``self.name(...)``, ``cls.name(...)``. Not ``super().name(...)`` or
    ``obj.name(...)``: such a call lands on no definition the flows read (``_is_own_function_call``
    in trllint.facts.rank_flow). More than those calls (``f(self).name(x)``), never fewer."""
    return any(_receiver(code, start) != _OTHER for start in _calls(code, name))


def _calls(code: str, name: str) -> Iterator[int]:
    """Where ``code`` may call ``name`` (see :func:`may_call`)."""
    for start in _name_starts(code, name):
        if _CALLED.match(code, start + len(name)) and not _DEFINED_HERE.search(code, max(0, start - 40), start):
            yield start


def _name_starts(code: str, name: str) -> Iterator[int]:
    """Where ``name`` (an identifier) starts in ``code`` after no word character, found without
    compiling a pattern for each name asked (a run asks about a hundred)."""
    start = code.find(name)
    while start != -1:
        if start == 0 or not _is_word_character(code[start - 1]):
            yield start
        start = code.find(name, start + 1)


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"  # `re`'s `\w` on text


def reads(code: str, name: str, *, attributes: bool) -> bool:
    """``code`` spells ``name`` where the flows read it as a call site or a value of a definition
    of that name (``_call_sites`` and ``_ModuleFacts`` in trllint.facts.rank_flow): anywhere but
    as the name a ``def`` defines, a keyword argument, a parameter's default or a name assigned
    to (``name=`` after a bracket, a comma or a line's start), and an attribute of anything but
    ``self`` or ``cls`` called (``obj.name(...)``), or read at all unless ``attributes`` (the
    name is a method's). More than that (``lambda name: ...``), never less."""
    for start in _name_starts(code, name):
        end = start + len(name)
        if end < len(code) and _is_word_character(code[end]):
            continue  # a longer name
        if _FUNCTION_DEFINED_HERE.search(code, max(0, start - 40), start):
            continue  # a class's name is read (LibCST's `Name`): a function's is not
        receiver = _receiver(code, start)
        if receiver == _OTHER:
            if attributes and not _CALLED.match(code, end):
                return True
            continue
        before = _blank_before(code, start)
        if receiver == _NONE and _BOUND_HERE.match(code, end) and (before == 0 or code[before - 1] in "(,\r\n"):
            continue  # `f(name=1)`, `def f(a, name=1)`, `name = 1`; not `x: None | name = 1`
        return True
    return False


_NONE, _SELF, _OTHER = "", "self", "other"


def _receiver(code: str, start: int) -> str:
    """What the name at ``start`` is read on: nothing, ``self`` or ``cls`` (``(self).name`` too,
    and ``f(self).name``: more), or another receiver. Its dot is looked for past spaces and
    continued lines but no line break: in brackets a dot may start the next line, and the name
    then reads as no attribute, which reads more; past a line break it may be a float's
    (``x = 1.`` then ``name(...)``)."""
    i = _blank_before(code, start)
    if i == 0 or code[i - 1] != ".":
        return _NONE
    i -= 1
    while i > 0 and code[i - 1] in " \t\f\r\n\\)":
        i -= 1
    first = i
    while first > 0 and _is_word_character(code[first - 1]):
        first -= 1
    return _SELF if code[first:i] in ("self", "cls") else _OTHER


def _blank_before(code: str, start: int) -> int:
    """Where the spaces and continued lines (a backslash, then a line break) right before
    ``start`` begin."""
    i = start
    while i > 0:
        if code[i - 1] in " \t\f":
            i -= 1
        elif code.endswith(("\\\n", "\\\r"), 0, i):
            i -= 2
        elif code.endswith("\\\r\n", 0, i):
            i -= 3
        else:
            break
    return i


# Right after a name: a call's bracket, past spaces, continued lines and closing brackets.
_CALLED = re.compile(r"[\s\\)]*\(")
# Right after a name: `=`, neither `==` nor an f-string's `{name=}` (which reads it).
_BOUND_HERE = re.compile(r"[ \t\f\\\r\n]*=(?!=)(?![\s\\]*[}!:])")
# Right before a name: the `def` or `class` that defines it (a run of continued lines past forty
# characters reads as a call: more, never fewer).
_DEFINED_HERE = re.compile(r"(?<!\w)(?:def|class)[\s\\]+$")
_FUNCTION_DEFINED_HERE = re.compile(r"(?<!\w)def[\s\\]+$")
# `self.<attribute>`, the literal first (trllint.facts.markers).
_SELF_ATTRIBUTE = re.compile(r"self(?<!\wself)[\s\\]*\.[\s\\]*(\w+)")
# `class Name` right before its bases' bracket, the literal first.
_CLASS_HEADER = re.compile(r"class(?<!\wclass)[\s\\]+\w+[\s\\]*(?=\()")


@dataclass(frozen=True)
class ModuleSlice:
    text: str
    lines: int  # how many of the module's lines it keeps
    total: int  # the module's lines
    # What a fact may prove its answer from before the slice is parsed (``ModuleFact.says_nothing``):
    words: frozenset[str] = frozenset()  # every word the kept statements' code spells
    asked: frozenset[str] = frozenset()  # the asked definitions' names, and an asked class's methods'
    defining: tuple[str, ...] = ()  # the text of each kept statement that defines one of `asked`
    # Those statements as CPython's tree of the whole module holds them, while the index still
    # holds that tree (None otherwise): the same nodes as a parse of each text, but their lines.
    defining_nodes: Callable[[], list[ast.stmt] | None] | None = field(default=None, compare=False, repr=False)

    def definitions(self) -> list[ast.stmt] | None:
        """CPython's parse of the statements that define one of ``asked`` (at the top or inside);
        None when one cannot be parsed on its own."""
        if self.defining_nodes is not None:
            kept = self.defining_nodes()
            if kept is not None:
                return kept
        statements: list[ast.stmt] = []
        for text in self.defining:
            tree = _parsed(text)
            if tree is None:
                return None
            statements.extend(tree.body)
        return statements

    def tree(self) -> ast.Module | None:
        """CPython's parse of the slice's text; None when it cannot be parsed."""
        return _parsed(self.text)

    @property
    def worth_reading(self) -> bool:
        """Under half of the module: the index then reads the definition from it. Over the
        training scripts of a repository that imports a 6,688-line utility module, half parsed
        a quarter fewer lines than a quarter did (several questions' slices of one module cost
        less than the whole), and no script more (benchmarks/README.md, issue 33)."""
        return 2 * self.lines < self.total


def _parsed(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _statements_holding(words: list[frozenset[str]]) -> dict[str, list[int]]:
    """word -> the indexes of the statements whose words hold it, in order."""
    holding: dict[str, list[int]] = {}
    for i, found in enumerate(words):
        for word in found:
            holding.setdefault(word, []).append(i)
    return holding


class ModuleCutter:
    """One module's statements, and the words each spells, read once for all its slices."""

    def __init__(
        self, text: str, outline: ModuleOutline, kept_tree: Callable[[], ast.Module | None] | None = None
    ) -> None:
        """``kept_tree``: CPython's tree of the module when its reader still holds it (None when
        it does not: a slice's definitions are then parsed from their text)."""
        # A lone carriage return: CPython's line numbers and these lines may count apart.
        lone_return = "\r" in text and text.count("\r") != text.count("\r\n")
        self.statements = () if lone_return else outline.statements
        self._kept_tree = kept_tree
        self.lines: list[str] = _LINE.findall(text)
        self.classes = frozenset(outline.classes)  # the names of its top-level classes
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
        # The names a class may define as a method (every name defined inside a statement: more).
        self.inner = frozenset(name for statement in self.statements for name in statement.inner)
        # The names a call may find a function of the module by: a class the module defines
        # once is no function (`Dataset(...)` builds one: the flows read no definition for it).
        self.callable = frozenset(
            name for name, found in self.defining.items() if name not in self.classes or len(found) > 1
        )
        self._looked_up: dict[int, frozenset[str]] = {}
        self._bases: dict[int, frozenset[str]] = {}
        self._callers: dict[str, list[int]] = {}
        self.cuttable = bool(self.statements) and self.statements[-1].last <= len(self.lines) and all(
            later.first > earlier.last for earlier, later in zip(self.statements, self.statements[1:])
        )

    # What each statement's code spells is read when a slice is first cut: a question about one
    # definition (``words_of``) reads that definition's statements alone.

    @cached_property
    def code(self) -> list[str]:
        """Each statement's code (a statement's lines hold its whole literals: each is read on its own)."""
        return [self._code_of(i) for i in range(len(self.statements))]

    @cached_property
    def words(self) -> list[frozenset[str]]:
        return [frozenset(_WORD.findall(chunk)) for chunk in self.code]

    def words_of(self, i: int) -> frozenset[str]:
        """The words statement ``i``'s code spells, read from its own lines (without the rest)."""
        return frozenset(_WORD.findall(self._code_of(i)))

    def _code_of(self, i: int) -> str:
        statement = self.statements[i]
        return _code("".join(self.lines[statement.first - 1 : statement.last]))

    @cached_property
    def spelling(self) -> dict[str, list[int]]:
        """word -> the statements that spell it (a call of a function, a use of a class)."""
        return _statements_holding(self.words)

    @cached_property
    def self_attributes(self) -> list[frozenset[str]]:
        """The attributes each statement spells on `self` (`self.model`)."""
        return [frozenset(_SELF_ATTRIBUTE.findall(chunk)) for chunk in self.code]

    @cached_property
    def self_spelling(self) -> dict[str, list[int]]:
        """attribute -> the statements that spell it on `self`."""
        return _statements_holding(self.self_attributes)

    def self_calls(self, i: int) -> frozenset[str]:
        """The attributes statement ``i`` may call on ``self`` (``self.model(x)``)."""
        return frozenset(a for a in self.self_attributes[i] if may_call(self.code[i], a))

    def looks_up(self, i: int) -> frozenset[str]:
        """The names of the module's definitions statement ``i`` may look up: the flows read every
        definition of such a name (see :func:`may_look_up`)."""
        if i not in self._looked_up:
            code = self.code[i]
            self._looked_up[i] = frozenset(n for n in self.words[i] & self.callable if may_look_up(code, n))
        return self._looked_up[i]

    def bases(self, i: int) -> frozenset[str]:
        """The words of the class headers in statement ``i`` (``class Trainer(Base, metaclass=M):``):
        where the flows read a class of the module by its name."""
        if i not in self._bases:
            code, words = self.code[i], set()
            for match in _CLASS_HEADER.finditer(code):
                end, depth = match.end(), 0
                while end < len(code):
                    depth += (code[end] in "([{") - (code[end] in ")]}")
                    end += 1
                    if depth <= 0:
                        break
                words.update(_WORD.findall(code, match.end(), end))
            self._bases[i] = frozenset(words)
        return self._bases[i]

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
        asked_names = self._asked(roots)
        looked_up = set(asked_names)  # `_reach` grows it
        # Every definition of a name looked up stays (the flows read a name defined twice as
        # neither); a name looked up later brings its own in `_reach`.
        pending = [*asked, *(i for name in looked_up for i in self.defining.get(name, ()))]
        reached = self._reach(pending, set(), looked_up, callers=True)
        base = [i for i, s in enumerate(statements) if (s.defines is None and s.binds is None) or s.declares_global]
        kept = self._reach(base, reached, looked_up, callers=False)
        return self._assembled(kept, asked_names)

    def whole(self, roots: Iterable[str]) -> ModuleSlice | None:
        """The whole module as a slice that keeps every statement, for a fact's proof about the
        definitions ``roots``; None when it cannot be cut along its statements' lines."""
        if not self.cuttable:
            return None
        every = self._assembled(range(len(self.statements)), self._asked(tuple(roots)))
        return replace(every, lines=len(self.lines))  # every line, the blank ones between too

    def _nodes_of(self, indexes: list[int]) -> Callable[[], list[ast.stmt] | None] | None:
        """What reads the statements ``indexes`` from the module's tree while the index keeps it;
        None without a reader of the tree."""
        kept_tree = self._kept_tree
        if kept_tree is None:
            return None
        statements = self.statements

        def nodes() -> list[ast.stmt] | None:
            tree = kept_tree()
            if tree is None or len(tree.body) != len(statements):
                return None
            return [tree.body[i] for i in indexes]

        return nodes

    def _assembled(self, kept: Iterable[int], asked: frozenset[str]) -> ModuleSlice:
        """The slice of the kept statements, in the module's order: their text, the count of
        their lines, the words their code spells, and those that define one of ``asked``."""
        statements = self.statements
        chunks: list[str] = []
        defining: list[int] = []
        words: set[str] = set()
        count = 0
        for i in sorted(kept):
            statement = statements[i]
            chunk = "".join(self.lines[statement.first - 1 : statement.last])
            chunks.append(chunk if chunk.endswith(("\n", "\r")) else chunk + "\n")
            count += statement.last - statement.first + 1
            words |= self.words[i]
            if not statement.definitions.isdisjoint(asked):
                defining.append(i)
        texts = tuple("".join(self.lines[statements[i].first - 1 : statements[i].last]) for i in defining)
        return ModuleSlice(
            "".join(chunks), count, len(self.lines), frozenset(words), asked, texts, self._nodes_of(defining)
        )

    def _asked(self, roots: tuple[str, ...]) -> frozenset[str]:
        """The names the flows answer for the definitions ``roots``: each by its own, and an asked
        class's methods by theirs (every class of the name: a module may define one twice)."""
        statements = self.statements
        classes = [i for name in roots for i in self.binding.get(name, ()) if statements[i].defines == name and name in self.classes]
        return frozenset({*roots, *(name for i in classes for name in statements[i].definitions)})

    def _reach(self, pending: list[int], kept: set[int], looked_up: set[str], *, callers: bool) -> set[int]:
        """``kept`` grown by ``pending`` and what the flows may read for them (see the module's
        docstring); with ``callers``, the callers of the definitions reached and of the names
        looked up too. ``looked_up``: the names whose every definition stays, grown here."""
        statements = self.statements
        if callers:
            for name in looked_up:
                pending.extend(self.callers(name))
        while pending:
            i = pending.pop()
            if i in kept:
                continue
            kept.add(i)
            code = self.code[i]
            for word in self.words[i]:
                for j in self.binding.get(word, ()):
                    defines = statements[j].defines
                    # Module-level code and imports bind a name wherever it is spelled; the flows
                    # read a function where it is named, a class only as a class's base.
                    if defines is None or (
                        word in self.bases(i) if defines in self.classes else reads(code, word, attributes=False)
                    ):
                        pending.append(j)
            # The flows find a definition by its name alone (a method's too), and read none that
            # is defined twice: every definition of a name they may look up stays, and with it
            # its callers (its parameters are read as what they pass).
            for name in self.looks_up(i) - looked_up:
                looked_up.add(name)
                pending.extend(self.defining[name])
                if callers:
                    pending.extend(self.callers(name))
            statement = statements[i]
            # `self.model(x)` is known to the flows when any statement of the module stores to
            # `self.model` (a class of the module it never names may): each that spells it stays.
            for attribute in self.self_calls(i):
                pending.extend(self.self_spelling.get(attribute, ()))
            if callers and statement.defines is not None:
                pending.extend(self.callers(statement.defines))
        return kept

    def callers(self, name: str) -> list[int]:
        """The statements the flows read as calling a definition ``name`` or handing it on
        (``_call_sites``, ``_ModuleFacts`` in trllint.facts.rank_flow), and a class's subclasses
        (they call its methods on ``self``)."""
        if name not in self._callers:
            found: list[int] = []
            spelling = self.spelling.get(name, ())
            if name in self.classes:
                found.extend(j for j in spelling if name in self.bases(j))
            if name in self.callable:
                attributes = name in self.inner
                found.extend(j for j in spelling if reads(self.code[j], name, attributes=attributes))
            self._callers[name] = found
        return self._callers[name]


def slice_of(text: str, outline: ModuleOutline, roots: Iterable[str]) -> ModuleSlice | None:
    """The module ``text`` (outlined as ``outline``) cut down to what the definitions named
    ``roots`` need; None when it cannot be cut along its statements' lines."""
    return ModuleCutter(text, outline).slice(roots)
