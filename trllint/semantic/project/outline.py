"""A module's outline: what it imports and which functions, classes, bases and methods it defines.

The outline is read from CPython's ``ast``, which parses about ten times faster than LibCST: it is
all the project index needs to follow an import, a re-export or a base class to the module that
defines a name. Only that module's own facts (a :class:`~trllint.semantic.project.summaries.ModuleSummary`)
cost a LibCST parse, and only when its text spells what the question is about.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Iterator

from trllint.core.ast_walk import dotted_name
from trllint.core.code_names import code_names
from dataclasses import dataclass


@dataclass(frozen=True)
class ImportRef:
    """``from <module> import <name>`` (``level`` dots before the module) or ``import <module>``."""

    module: str
    level: int = 0
    name: str | None = None

    def to_json(self) -> list[str | int | None]:
        return [self.module, self.level, self.name]

    @classmethod
    def from_json(cls, data: list[Any]) -> ImportRef:  # JSON read back: the caller vouches for its shape
        return cls(data[0], data[1], data[2])


@dataclass(frozen=True)
class ClassOutline:
    bases: tuple[str, ...]
    methods: tuple[str, ...]


@dataclass(frozen=True)
class TopStatement:
    """One statement at the top of a module: its lines (1-based, a definition's decorators
    included), the name it defines when it is a function or a class, and the names of the
    functions and classes defined inside it (methods, nested functions)."""

    first: int
    last: int
    defines: str | None = None
    inner: frozenset[str] = frozenset()
    # For a statement that defines nothing at the top: the words of the names it binds (`x = ...`,
    # `cfg.rank = ...`, `for i in ...`, nested definitions; an import, here or inside it (`try:
    # import deepspeed`): every word it spells), or None when it must stay in every slice (a `*` or
    # `__future__` import, a global declaration, a match).
    binds: frozenset[str] | None = None
    # A `global` statement lies in it (in a function: it may bind a global another one reads).
    declares_global: bool = False

    @property
    def definitions(self) -> frozenset[str]:
        """The names of every function and class it defines, itself or inside it."""
        return self.inner if self.defines is None else self.inner | {self.defines}


@dataclass(frozen=True)
class ModuleOutline:
    imports: dict[str, ImportRef]
    functions: frozenset[str]
    classes: dict[str, ClassOutline]
    # Every top-level statement, in order: what a slice of the module is cut from
    # (trllint.semantic.project.slices).
    statements: tuple[TopStatement, ...] = ()


def outline_of(tree: ast.Module) -> ModuleOutline:
    classes = {
        s.name: ClassOutline(
            tuple(name for name in map(dotted_name, s.bases) if name),
            tuple(m.name for m in s.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))),
        )
        for s in tree.body
        if isinstance(s, ast.ClassDef)
    }
    functions = frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return ModuleOutline(module_imports(tree), functions, classes, tuple(map(_top_statement, tree.body)))


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The fields that hold statements (an except clause and a match case hold them in turn).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def statements_below(statement: ast.stmt) -> Iterator[tuple[ast.AST, bool]]:
    """``statement`` and every statement, except clause and match case below it, each with
    whether it lies inside a function or class defined below ``statement`` (a scope of its own).
    Statements only are walked: a definition is one, and expressions are most of a tree."""
    pending: list[tuple[ast.AST, bool]] = [(statement, False)]
    while pending:
        current, inside = pending.pop()
        yield current, inside
        nested = inside or (current is not statement and isinstance(current, _DEFINITIONS))
        for field in _BLOCKS:
            pending.extend((child, nested) for child in getattr(current, field, ()))


def _top_statement(statement: ast.stmt) -> TopStatement:
    """The statement's lines, the definitions in it, the words of what it binds in its own scope
    (see ``TopStatement.binds``), and whether it declares a global."""
    inner: set[str] = set()
    # A definition binds its own name only: the words of what its body binds are not read.
    words: set[str] | None = None if isinstance(statement, _DEFINITIONS) else set()
    declares_global = False
    for node, inside in statements_below(statement):
        if node is not statement and isinstance(node, _DEFINITIONS):
            inner.add(node.name)
        declares_global = declares_global or isinstance(node, ast.Global)
        if inside or words is None:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # At the top or inside (`try: import deepspeed`): its words (see `_imported`).
            imported = _imported(node)
            words = None if imported is None else words | imported
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Match)):
            words = None
        else:
            words |= _bound_by(node)
    last = statement.end_lineno or statement.lineno
    if isinstance(statement, _DEFINITIONS):
        first = min([statement.lineno, *(d.lineno for d in statement.decorator_list)])
        return TopStatement(first, last, statement.name, frozenset(inner), None, declares_global)
    binds = None if words is None else frozenset(words)
    return TopStatement(statement.lineno, last, None, frozenset(inner), binds, declares_global)


def _imported(statement: ast.Import | ast.ImportFrom) -> frozenset[str] | None:
    """The words a top-level import spells, which the slices read as what it binds: the names it
    binds, and the names it imports them from, which the rank flows read as names too (a module's
    ``summarize`` method is "handed on" by ``from .losses import summarize as s``). None for one
    that stays in every slice: a ``*`` import (which names it binds is not known) and a
    ``__future__`` import."""
    if isinstance(statement, ast.ImportFrom) and (statement.module == "__future__" or any(a.name == "*" for a in statement.names)):
        return None
    words = {part for alias in statement.names for name in (alias.name, alias.asname or "") for part in name.split(".")}
    if isinstance(statement, ast.ImportFrom) and statement.module:
        words.update(statement.module.split("."))
    return frozenset(words - {""})


def _bound_by(node: ast.AST) -> set[str]:
    """The words of the names one statement binds itself: its targets (attribute names too), an
    except clause's name, a definition's name. (A ``:=`` in an expression is not read: the flows
    read none either.)"""
    if isinstance(node, _DEFINITIONS):
        return {node.name}
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    targets: list[ast.AST] = []
    if isinstance(node, (ast.Assign, ast.Delete)):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    words: set[str] = set()
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Name):
                words.add(part.id)
            elif isinstance(part, ast.Attribute):
                words.add(part.attr)
    return words


def module_imports(tree: ast.Module) -> dict[str, ImportRef]:
    """Local name -> where it comes from, for the module-level imports (relative ones included),
    those under a module-level ``if`` or ``try`` (``try: import x except ImportError: ...``) too."""
    found: dict[str, ImportRef] = {}
    _collect_imports(tree.body, found)
    return found


def _collect_imports(statements: list[ast.stmt], found: dict[str, ImportRef]) -> None:
    # Not a closure that calls itself: that would be a reference cycle left for the collector.
    for statement in statements:
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = ImportRef(statement.module or "", statement.level, alias.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname is not None:
                    found[alias.asname] = ImportRef(alias.name)
                else:
                    top = alias.name.split(".")[0]
                    found.setdefault(top, ImportRef(top))
        elif isinstance(statement, ast.If):
            _collect_imports(statement.body, found)
            _collect_imports(statement.orelse, found)  # an `elif` is an `if` here
        elif isinstance(statement, ast.Try):
            _collect_imports(statement.body, found)
            for handler in statement.handlers:
                _collect_imports(handler.body, found)
            _collect_imports(statement.orelse, found)


def calls_or_imports_one_of(tree: ast.Module, names: frozenset[str]) -> tuple[bool, frozenset[str]]:
    """Whether some call in ``tree`` calls a function whose last name is one of ``names`` (the
    code names' calls) or some import (anywhere) names one, and the names such imports bind
    (``from torch.distributed import all_reduce as total``: ``total``). Every call a LibCST
    analysis can resolve to such a function spells the name, or a name one of those imports binds."""
    bound = frozenset(
        alias.asname or alias.name.split(".")[0]
        for node in _statements_anywhere(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
        if alias.name.rsplit(".", 1)[-1] in names
    )
    return bool(bound) or not names.isdisjoint(code_names(tree).calls), bound


def _statements_anywhere(tree: ast.Module) -> list[ast.AST]:
    """Every statement of the module (and except clause and match case), nested ones too, in no
    particular order: a loop over statement lists alone, not every expression."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        found.append(node)
        for field in _BLOCKS:
            children = getattr(node, field, None)
            if children:
                pending.extend(children)
    return found


def names_only_where_defined(text: str, name: str) -> bool:
    """``text`` spells ``name`` (as a name, not after a dot) nowhere a module-level import (the
    only kind the outline follows) can bind it, if at all. Such an import spells the name it
    binds after ``import``, ``as``, a comma or a bracket (or at the start of a line, inside a
    bracketed list), followed by a comma, a bracket, a dot, ``as``, a semicolon, a comment or the
    end of its line, and outside any ``def`` or ``class``. A word anywhere else (``return name.x``,
    ``class A(name):``, a method docstring's ``from pkg import name``) binds nothing. A comment or
    a string counts as code, which only ever answers False more often, except a line of a string
    or bracket that starts in the first column with ``def``, ``class`` or ``@``: it is taken for
    the definition it spells."""
    return all(_binds_no_import(text, start, start + len(name)) for start in _word_at(text, name))


def _word_at(text: str, word: str) -> Iterator[int]:
    """Where ``word`` stands as a name of its own in ``text``: not part of a longer name, and not
    an attribute (after a dot). (A search per name, not a regex compiled per name.)"""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            yield start
        start = text.find(word, start + 1)


# What an import's bound name may stand after on its line, and before.
_AFTER_AN_IMPORT_WORD = re.compile(r"(?:^|[\s,(])(?:import|as)$|[,(]$")
_BEFORE_AN_END = re.compile(r"[ \t\f]*(?:[,)#;\\\r\n]|$|as\b)")
_BEFORE_AN_END_OR_DOT = re.compile(r"[ \t\f]*(?:[,)#;.\\\r\n]|$|as\b)")


def _binds_no_import(text: str, start: int, end: int) -> bool:
    """The name at ``text[start:end]`` stands where no module-level import can bind it: not after
    ``import``, ``as``, a comma or a bracket (a line's start counts as after a bracket's comma),
    or not followed by what ends an imported name, or inside a definition."""
    before = _before(text, start)
    if before is None:  # the start of a line: a bracketed list's item, never a dotted one
        if not _BEFORE_AN_END.match(text, end):
            return True
    elif not _AFTER_AN_IMPORT_WORD.search(before) or not _BEFORE_AN_END_OR_DOT.match(text, end):
        return True
    return _DEFINITION_HEADER.match(text, _top_level_line(text, start)) is not None


def _before(text: str, start: int) -> str | None:
    """The text of the line before ``start``, blanks and backslash-joined lines aside (up to its
    last 12 characters, enough for `` as``/``import``); None at the start of a logical line."""
    position = start
    while True:
        line_start = text.rfind("\n", 0, position) + 1
        before = text[line_start:position].rstrip(" \t\f")
        if before:
            return before[-12:]
        if line_start == 0:
            return None
        newline = line_start - 1
        if newline > 0 and text[newline - 1] == "\r":
            newline -= 1
        if newline == 0 or text[newline - 1] != "\\":
            return None  # not a line its predecessor's backslash joins
        position = newline - 1


# A line in the first column that opens a definition: what it holds is not at module level.
_DEFINITION_HEADER = re.compile(r"(?:def|class|async[ \t]+def)[ \t(]|@")


def _top_level_line(text: str, position: int) -> int:
    """Where the line that holds ``position`` starts, when it starts in the first column; else
    where the nearest line above it that does (a blank or comment line aside, and a bracket's
    closing line, such as a long signature's ``) -> None:``)."""
    line_start = text.rfind("\n", 0, position) + 1
    while line_start > 0 and text[line_start : line_start + 1] in ("", " ", "\t", "\f", "\r", "\n", "#", ")", "]", "}"):
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return line_start


def class_bases(tree: ast.Module, lines: list[str], reading: frozenset[str] | None = None) -> set[str]:
    """The bases of the module's classes (nested ones too), as written.

    ``reading``: they count only when some class reads one of these members on a ``self``
    attribute it does not bind itself (``self.model.config``), the only read an attribute
    inherited from a base can change; then every class's bases count, since the reading class
    may inherit through another class of the file. The same test as
    ``trllint.facts.wrapping.reads_member_of_an_inherited_attribute``, on CPython's tree
    (``lines``: the module's, to skip a class whose text spells no such read without walking it)."""
    classes = [node for node in _statements_anywhere(tree) if type(node) is ast.ClassDef]  # nested ones too
    if reading is not None and not any(_reads_inherited_member(c, reading, lines) for c in classes):
        return set()
    return {name for c in classes for name in map(dotted_name, c.bases) if name}


def _reads_inherited_member(cls: ast.ClassDef, members: frozenset[str], lines: list[str]) -> bool:
    segment = "\n".join(lines[cls.lineno - 1 : cls.end_lineno])
    if not re.search(r"self\s*\.\s*\w+\s*\.\s*(?:" + "|".join(map(re.escape, sorted(members))) + r")\b", segment):
        return False
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in members
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "self"
        ):
            read.add(node.value.attr)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                bound.update(_self_attributes_bound(target))
        elif isinstance(node, ast.AnnAssign):
            bound.update(_self_attributes_bound(node.target))
    return bool(read - bound)


def _self_attributes_bound(target: ast.expr) -> list[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _self_attributes_bound(element)]
    if isinstance(target, ast.Starred):
        return _self_attributes_bound(target.value)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return [target.attr]
    return []
