"""Where each LibCST node class holds its children: the table the walks of
``trllint.core.cst.walk`` read.

Which fields hold a node class's children, and in which order LibCST visits them, is read once
per class through LibCST's public visitor API: the first node of a class met is visited by a
visitor that notes each field LibCST announces (``on_visit_attribute``) and goes no deeper.
Reading those fields then gives ``node.children`` without building anything (``node.children``
rebuilds the node). tests/test_walk.py holds the table to ``node.children`` and to the fields
LibCST announces, for every node class met on the rule cases and trllint's own source.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import typing
from typing import Any, Callable

import libcst as cst

# A node's children, in LibCST's visiting order.
Children = Callable[[cst.CSTNode], list[cst.CSTNode]]

# What an optional field holds when it holds nothing, besides None.
_DEFAULT = cst.MaybeSentinel.DEFAULT


def _subclasses(base: type) -> set[type]:
    found: set[type] = set()
    pending: list[type] = [base]
    sub: type  # typeshed's __subclasses__ of a bare `type` has no element type mypy can infer
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return found


@functools.lru_cache(maxsize=None)
def node_types(*bases: type) -> frozenset[type]:
    """``bases`` and every class derived from them: ``type(node) in node_types(...)`` answers
    ``isinstance(node, bases)`` for a node of a parsed tree. LibCST's node classes are ABCs, so a
    failing ``isinstance`` calls ABCMeta's ``__instancecheck__`` in Python: most of the cost of
    the helpers that test every node they meet. (A leaf class, one nothing derives from, is
    compared with ``is``; tests/test_walk.py holds both to ``isinstance``.)"""
    return frozenset({*bases, *(sub for base in bases for sub in _subclasses(base))})


_NODE_CLASSES = node_types(cst.CSTNode)

# Whitespace, comments, operators and brackets: node types whose subtrees hold nothing but more
# of the same (tests/test_walk.py checks the closure on LibCST's annotations).
TOKEN_TYPES: frozenset[type] = node_types(
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
    cst.BaseUnaryOp, cst.BaseBooleanOp, cst.BaseBinaryOp, cst.BaseCompOp, cst.BaseAugOp,
    cst.AssignEqual, cst.Colon, cst.Comma, cst.Dot, cst.ImportStar, cst.Semicolon,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
)  # fmt: skip


class _FieldRecorder(cst.CSTVisitor):
    """Notes the fields LibCST visits on one node, in its order, without entering its children.
    LibCST announces each field it visits, an empty one too."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.node

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node and attribute not in self.fields:
            self.fields.append(attribute)


def _announced_fields(node: cst.CSTNode) -> tuple[str, ...]:
    recorder = _FieldRecorder(node)
    node.visit(recorder)
    return tuple(recorder.fields)


def _shape(value: Any) -> int:
    """What a field holds, as far as LibCST's visit of it may depend on: nothing (None, or
    ``MaybeSentinel.DEFAULT``), an empty sequence, or nodes."""
    if value is None or value is _DEFAULT:
        return 0
    if type(value) is tuple or type(value) is list:
        return 2 if value else 1
    return 2


class Layout:
    """Where one node class holds its children: the fields LibCST visits, in its order, read from
    the first node of the class met. LibCST visits a few fields only when they hold something
    (a format spec): the node fields the first node did not announce are ``unplaced``, and a node
    that holds something in one of them is read as LibCST announces it (asked once for each
    combination of what the node's fields hold)."""

    def __init__(self, node: cst.CSTNode) -> None:
        self.node_type = type(node)
        self.fields = _announced_fields(node)
        self.node_fields = tuple(_node_fields(self.node_type))
        self.unplaced = tuple(name for name in self.node_fields if name not in self.fields)
        self._by_shape: dict[tuple[int, ...], tuple[str, ...]] = {}

    def fields_of(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The fields to read ``node``'s children from, in LibCST's order."""
        if self.unplaced and any(_shape(getattr(node, name)) for name in self.unplaced):
            return self.announced(node)
        return self.fields

    def announced(self, node: cst.CSTNode) -> tuple[str, ...]:
        """Exactly the fields LibCST announces as it visits ``node``, the empty ones included."""
        shape = tuple(_shape(getattr(node, name)) for name in self.node_fields)
        fields = self._by_shape.get(shape)
        if fields is None:
            fields = self._by_shape[shape] = _announced_fields(node)
        return fields


# Node class -> where it holds its children (the table the walks read).
_LAYOUTS: dict[type, Layout] = {}


def layout_of(node: cst.CSTNode) -> Layout:
    """Where ``node``'s class holds its children (read from ``node`` if the class is new)."""
    layout = _LAYOUTS.get(type(node))
    if layout is None:
        layout = _LAYOUTS[type(node)] = Layout(node)
    return layout


def child_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields of ``node`` that LibCST visits, in its visiting (= source) order: those that
    hold its children, and the empty ones it still announces to a visitor's field hooks."""
    return layout_of(node).announced(node)


def _node_fields(node_type: type) -> list[str]:
    """The dataclass fields of ``node_type`` whose annotation names a node class."""
    return [f.name for f in dataclasses.fields(node_type) if field_node_types(node_type, f.name)]


@functools.lru_cache(maxsize=None)
def _annotations(node_type: type) -> dict[str, Any]:
    # LibCST's annotations are objects already: read as the classes hold them (get_type_hints'
    # order, the MRO from the base down), they cost a tenth of typing.get_type_hints, which a
    # first walk asks of every node class it meets.
    hints: dict[str, Any] = {}
    for klass in reversed(node_type.__mro__):
        hints.update(klass.__dict__.get("__annotations__", {}))
    return hints


@functools.lru_cache(maxsize=None)
def _evaluated_annotations(node_type: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(node_type)
    except Exception:  # an annotation that does not evaluate: treated as holding anything
        return {}


def field_node_types(node_type: type, name: str) -> set[type]:
    """The node classes a field's annotation names (through Union, Sequence, Optional...)."""
    found = _node_classes(_annotations(node_type).get(name))
    if found is None:  # it names a class by a string: evaluated, as typing does
        found = _node_classes(_evaluated_annotations(node_type).get(name))
    return {cst.CSTNode} if found is None else found


def _node_classes(hint: Any) -> set[type] | None:
    """The node classes ``hint`` names; None when it is missing or names one by a string."""
    if hint is None:
        return None
    found: set[type] = set()
    pending = [hint]
    while pending:
        current = pending.pop()
        if typing.get_origin(current) is typing.Literal:
            continue  # its strings are values, not classes
        if isinstance(current, (str, typing.ForwardRef)):
            return None
        # The MRO, not issubclass: ABCMeta's check is most of this function's cost on a first
        # walk, and no class is registered as a virtual CSTNode.
        if isinstance(current, type) and cst.CSTNode in current.__mro__:
            found.add(current)
        pending.extend(typing.get_args(current))
    return found


@functools.lru_cache(maxsize=None)
def _token_field(node_type: type, name: str) -> bool:
    """Whether a field can hold nothing but whitespace, comments and punctuation."""
    types = field_node_types(node_type, name)
    return bool(types) and types <= TOKEN_TYPES


def no_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return []


def _reader(fields: tuple[str, ...]) -> Children:
    """A function returning a node's children from ``fields``. A field holds one node, a sequence
    of them, or nothing (None, or ``MaybeSentinel.DEFAULT``). A class with no such field (a name,
    a number: a third of a syntax walk's nodes) shares ``no_children``, which walks skip."""
    if not fields:
        return no_children
    # Walks call this once per node: the values are fetched in one call, and a node's class is
    # looked up in a set (``isinstance`` on LibCST's ABCs runs Python code for each test).
    values = operator.attrgetter(*fields) if len(fields) > 1 else lambda node: (getattr(node, fields[0]),)
    node_classes = _NODE_CLASSES

    def read(node: cst.CSTNode) -> list[cst.CSTNode]:
        found: list[cst.CSTNode] = []
        for value in values(node):
            kind = type(value)
            if kind in node_classes:
                found.append(value)
            elif kind is tuple or kind is list:
                found.extend(value)
            elif value is not None and value is not _DEFAULT:  # a class made later, or another sequence
                found.append(value) if isinstance(value, cst.CSTNode) else found.extend(value)
        return found

    return read


_READERS: dict[type, Children] = {}
# Node class -> its syntax children function, for the classes met so far: the hottest walks look
# a class up here before they call ``reader``.
SYNTAX_READERS: dict[type, Children] = {}


def reader(node: cst.CSTNode, *, syntax_only: bool = False) -> Children:
    """The children function of ``node``'s class: all children, or (``syntax_only``) all but the
    fields that hold only whitespace, comments and punctuation."""
    node_type = type(node)
    readers = SYNTAX_READERS if syntax_only else _READERS
    read = readers.get(node_type)
    if read is None:
        layout = layout_of(node)
        unplaced = [name for name in layout.unplaced if not (syntax_only and _token_field(node_type, name))]
        if unplaced:
            read = _reader_by_layout(layout, syntax_only)
        else:
            read = _reader(_kept_fields(node_type, layout.fields, syntax_only))
        readers[node_type] = read
    return read


def _kept_fields(node_type: type, fields: tuple[str, ...], syntax_only: bool) -> tuple[str, ...]:
    return tuple(name for name in fields if not _token_field(node_type, name)) if syntax_only else fields


def _reader_by_layout(layout: Layout, syntax_only: bool) -> Children:
    """The children function of a class some of whose fields LibCST visits only when they hold
    something: the fields to read are looked up per node."""
    readers: dict[tuple[str, ...], Children] = {}

    def read(node: cst.CSTNode) -> list[cst.CSTNode]:
        fields = layout.fields_of(node)
        read_fields = readers.get(fields)
        if read_fields is None:
            read_fields = readers[fields] = _reader(_kept_fields(layout.node_type, fields, syntax_only))
        return read_fields(node)

    return read


@functools.lru_cache(maxsize=None)
def field_reader(node_type: type, field: str, syntax_only: bool) -> Children:
    """The children of one field (for field hooks); none for a token field of a syntax-only walk."""
    return _reader(() if syntax_only and _token_field(node_type, field) else (field,))


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` without building anything."""
    return reader(node)(node)


def syntax_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` less whitespace, comments and punctuation (operators and brackets):
    what an analysis of the code's meaning looks at."""
    return reader(node, syntax_only=True)(node)
