"""A module's outline: what it imports and which functions, classes, bases and methods it defines.

The outline is read from CPython's ``ast``, which parses about ten times faster than LibCST: it is
all the project index needs to follow an import, a re-export or a base class to the module that
defines a name, and no rule decides on anything else it reads. Only that module's own facts (a
:class:`~trllint.semantic.project.summaries.ModuleFact`) cost a LibCST parse, and only when its
text spells what the question is about. The index keeps outlines on disk beside the facts.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Iterator

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
class Keeper:
    """A method other than ``__init__`` that keeps an argument as a ``self`` attribute
    (``def set_prepared_model(self, model): self.model = model``): what a caller hands it, the
    instance holds from then on."""

    method: str
    parameter: str
    position: int  # among the positional parameters after ``self``; -1 for a keyword-only one
    attribute: str  # ``model`` for ``self.model``


@dataclass(frozen=True)
class ClassOutline:
    bases: tuple[str, ...]
    methods: tuple[str, ...]
    keepers: tuple[Keeper, ...] = ()
    # (attribute, method): a method of the class binds ``self.<attribute>`` to something of its
    # own (``self.model = loader(path)``, not a parameter) and calls ``self.<method>(...)``: that
    # method runs while the class sets the attribute up, before anything is handed to a keeper.
    setting_up: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModuleOutline:
    imports: dict[str, ImportRef]
    functions: frozenset[str]
    classes: dict[str, ClassOutline]

    def to_json(self) -> dict[str, Any]:
        return {
            "imports": {name: ref.to_json() for name, ref in self.imports.items()},
            "functions": sorted(self.functions),
            "classes": {
                name: [
                    list(c.bases),
                    list(c.methods),
                    [[k.method, k.parameter, k.position, k.attribute] for k in c.keepers],
                    [list(pair) for pair in c.setting_up],
                ]
                for name, c in self.classes.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModuleOutline:  # JSON read back: the caller vouches for its shape
        return cls(
            {name: ImportRef.from_json(ref) for name, ref in data["imports"].items()},
            frozenset(data["functions"]),
            {
                name: ClassOutline(
                    tuple(bases), tuple(methods), tuple(Keeper(*k) for k in keepers), tuple((a, m) for a, m in setting_up)
                )
                for name, (bases, methods, keepers, setting_up) in data["classes"].items()
            },
        )


def outline_of(tree: ast.Module) -> ModuleOutline:
    classes = {
        s.name: ClassOutline(
            tuple(name for name in map(dotted_name, s.bases) if name),
            tuple(m.name for m in s.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))),
            tuple(keeper for m in s.body if isinstance(m, ast.FunctionDef) for keeper in _keepers(m)),
            _setting_up([m for m in s.body if isinstance(m, ast.FunctionDef)]),
        )
        for s in tree.body
        if isinstance(s, ast.ClassDef)
    }
    functions = frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return ModuleOutline(module_imports(tree), functions, classes)


# The fields that hold statements (an except clause and a match case hold them in turn).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _keepers(method: ast.FunctionDef) -> list[Keeper]:
    """What the method keeps of its arguments: ``self.<attribute> = <parameter>`` anywhere in its
    body but a nested function or class, for a parameter it never binds again. ``__init__`` and
    the other special methods are no keepers: no ``x.name(...)`` call hands them an argument."""
    arguments = method.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if method.name.startswith("__") or not positional or positional[0] != "self" or method.decorator_list:
        return []
    # A parameter the method binds again (`model = unwrap(model)`) no longer holds the argument.
    rebound = {n.id for n in ast.walk(method) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    positions = {name: index for index, name in enumerate(positional[1:]) if name not in rebound}
    positions.update((a.arg, -1) for a in arguments.kwonlyargs if a.arg not in rebound)
    return sorted(
        (
            Keeper(method.name, value.id, positions[value.id], attribute)
            for attribute, value in _self_assignments(method)
            if isinstance(value, ast.Name) and value.id in positions
        ),
        key=lambda k: (k.attribute, k.parameter),
    )


def _setting_up(methods: list[ast.FunctionDef]) -> tuple[tuple[str, str], ...]:
    """(attribute, method) for each ``self.<method>(...)`` that the class calls only from methods
    that bind ``self.<attribute>`` to something of their own (not one of their parameters):
    it runs while the class sets the attribute up, and at no other time the class shows."""
    binds: dict[str, set[str]] = {}  # method -> the attributes it sets up
    calls: dict[str, set[str]] = {}  # method -> the methods it calls on self
    for method in methods:
        parameters = {a.arg for a in ast.walk(method.args) if isinstance(a, ast.arg)}
        binds[method.name] = {
            attribute
            for attribute, value in _self_assignments(method)
            if not (isinstance(value, ast.Name) and value.id in parameters)
        }
        calls[method.name] = {
            node.func.attr
            for node in ast.walk(method)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        }
    found: set[tuple[str, str]] = set()
    for attribute in set().union(*binds.values()) if binds else ():
        inside = set().union(*(calls[m] for m in calls if attribute in binds[m]))
        outside = set().union(*(calls[m] for m in calls if attribute not in binds[m]))
        found.update((attribute, name) for name in inside - outside)
    return tuple(sorted(found))


def _self_assignments(method: ast.FunctionDef) -> list[tuple[str, ast.expr | None]]:
    """(attribute, value) for each ``self.<attribute> = value`` in the method's body, but in a
    nested function or class (its own scope: it assigns when it runs, if ever)."""
    found: list[tuple[str, ast.expr | None]] = []
    for node in _statements_anywhere(method.body, into_scopes=False):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.append((target.attr, node.value))
    return found


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or a chain of attributes on one, as a class's base is written; None
    for anything else (``f().x``, ``a[0].x``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted_name(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


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


def _statements_anywhere(body: list[ast.stmt], into_scopes: bool = True) -> list[ast.AST]:
    """Every statement of ``body`` (and except clause and match case), nested ones too, in no
    particular order: a loop over statement lists alone, not every expression. Without
    ``into_scopes``, not those of a nested function or class."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        found.append(node)
        if not into_scopes and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
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


# Between two names of a dotted chain: spaces, line breaks, a backslash continuation, a comment.
_COMMENT = r"#[^\n]*\n"
_CHAIN_GAP = rf"(?:\s|\\\n|{_COMMENT})*"
_NAME = r"[^\W\d]\w*"
# After the first name: the rest of the chain, then the call's parenthesis (`(utils.save)(` too).
_CALLED_CHAIN = rf"((?:{_CHAIN_GAP}\.{_CHAIN_GAP}{_NAME})*)(?:{_CHAIN_GAP}\))*{_CHAIN_GAP}\("


def spelled_dotted_names(text: str, heads: frozenset[str] | set[str]) -> set[str]:
    """Every dotted name the text spells as called (``utils.save(``, ``(utils.save)(``) whose first
    name is one of ``heads``, in code, comments or strings alike. A test of the text only: it holds
    every call of the file whose callee is such a name (``SemanticModel.dotted_calls``, which LibCST
    decides), so a prefilter asked of it lets through every file the calls could."""
    if not heads:
        return set()
    first = "|".join(map(re.escape, sorted(heads)))
    pattern = re.compile(rf"(?<![\w.])({first})\b{_CALLED_CHAIN}")
    return {
        ".".join([match.group(1), *re.findall(_NAME, re.sub(_COMMENT, "", match.group(2)))])
        for match in pattern.finditer(text)
    }


def class_bases(tree: ast.Module, lines: list[str], reading: frozenset[str] | None = None) -> set[str]:
    """The bases of the module's classes (nested ones too), as written.

    ``reading``: they count only when the text of some class spells a read of one of these
    members on a ``self`` attribute (``self.model.config``), the only read an inherited attribute
    can change; then every class's bases count, since the reading class may inherit through
    another class of the file. A test of the text only: the rule itself decides which reads
    matter."""
    classes = [node for node in _statements_anywhere(tree.body) if type(node) is ast.ClassDef]  # nested ones too
    if reading is not None and not any(_spells_a_member_read(c, reading, lines) for c in classes):
        return set()
    return {name for c in classes for name in map(dotted_name, c.bases) if name}


def attributes_read_on_self(text: str) -> set[str]:
    """The attributes whose members the text reads on ``self`` (``model`` for ``self.model.x``)."""
    return set(_MEMBER_OF_SELF.findall(text))


_MEMBER_OF_SELF = re.compile(r"self\s*\.\s*(\w+)\s*\.\s*\w")


def classes_reading(tree: ast.Module, lines: list[str], reading: frozenset[str]) -> set[str]:
    """The module's top-level classes whose text spells a read of one of ``reading`` on a
    ``self`` attribute: the classes a subclass's wrapping of that attribute can break."""
    return {s.name for s in tree.body if type(s) is ast.ClassDef and _spells_a_member_read(s, reading, lines)}


def _spells_a_member_read(cls: ast.ClassDef, members: frozenset[str], lines: list[str]) -> bool:
    segment = "\n".join(lines[cls.lineno - 1 : cls.end_lineno])
    return bool(re.search(r"self\s*\.\s*\w+\s*\.\s*(?:" + "|".join(map(re.escape, sorted(members))) + r")\b", segment))
