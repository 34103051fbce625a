"""Walking a LibCST tree without rebuilding it.

LibCST's ``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``),
even for a visitor that changes nothing: a traversal costs about as much as the parse. These
walks read the children straight from the node fields, in the order LibCST itself visits them
(read once per node class from the bytecode of its ``_visit_and_replace_children``), and call the same
``visit_<Node>`` / ``leave_<Node>`` methods, so a visitor behaves as under ``node.visit``.

Two thirds of a LibCST tree is whitespace, comments and punctuation (``SimpleWhitespace``,
``Comma``, ``LeftParen``...). A walk whose visitors hook none of those node types does not
descend into them: it calls exactly the same methods, on a third of the nodes.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Callable, Sequence

import libcst as cst

from trllint.core.cst.private import TOKEN_MODULES, is_no_op, visited_fields

# A node's children, in LibCST's visiting order.
Children = Callable[[cst.CSTNode], list[cst.CSTNode]]

# How a field holds its children, from the helper LibCST visits it with.
_ONE, _OPTIONAL, _SENTINEL, _MANY = "one", "optional", "sentinel", "many"
_KINDS = {
    "required": _ONE,
    "optional": _OPTIONAL,
    "sentinel": _SENTINEL,
    "sequence": _MANY,
    "iterable": _MANY,
    "body_sequence": _MANY,
    "body_iterable": _MANY,
}
_CHILD_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


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


# Whitespace, comments, operators and brackets: node types whose subtrees hold nothing but more
# of the same (tests/test_walk.py checks the closure on LibCST's annotations). LibCST keeps the
# first two kinds in TOKEN_MODULES.
TOKEN_TYPES: frozenset[type] = frozenset(
    t for t in _subclasses(cst.CSTNode) if t.__module__ in TOKEN_MODULES
) | {cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace}
_TOKEN_NAMES = frozenset(t.__name__ for t in TOKEN_TYPES)


def child_fields(node_type: type) -> tuple[tuple[str, str], ...]:
    """(field, kind) for the fields of ``node_type`` that hold children, in LibCST's visiting
    (= source) order; kind says whether the field holds one node, maybe one, or a sequence."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        found: list[tuple[str, str]] | None
        try:
            found = [(name, _KINDS.get(helper, "")) for helper, name in visited_fields(node_type)]
        except (AttributeError, TypeError):
            found = None  # no bytecode to read (a compiled LibCST)
        if found is None or any(not kind for _, kind in found):
            # Decide per value, in dataclass order, over the fields that may hold a node.
            found = [
                (f.name, "")
                for f in dataclasses.fields(node_type)
                if f.type not in ("str", "bool", "int") and field_node_types(node_type, f.name)
            ]
        kinds: dict[str, str] = {}
        for name, kind in found:  # a field visited two ways (ImportFrom.names): decide per value
            kinds[name] = kind if kinds.get(name, kind) == kind else ""
        fields = _CHILD_FIELDS[node_type] = tuple(kinds.items())
    return fields


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


def _nodes_in(value: Any) -> list[cst.CSTNode]:
    if isinstance(value, cst.CSTNode):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, cst.CSTNode)]
    return []


def _no_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return []


def _compile_reader(node_type: type, fields: Sequence[tuple[str, str]]) -> Children:
    """A function returning a node's children from ``fields``, written out for this one class.

    Walks call it once per node; straight-line attribute reads are several times faster than a
    loop that looks up each field and branches on how it holds its children. A class with no
    such field (a name, a number: a third of a syntax walk's nodes) shares ``_no_children``,
    which ``visit`` does not call.
    """
    if not fields:
        return _no_children
    lines = ["def read(node):", "    found = []"]
    for name, kind in fields:  # names come from LibCST's dataclass fields: plain identifiers
        if kind == _ONE:
            lines.append(f"    found.append(node.{name})")
        elif kind == _MANY:
            lines += [f"    value = node.{name}", "    if value:", "        found.extend(value)"]  # a few may be None
        elif kind == _OPTIONAL:
            lines += [f"    value = node.{name}", "    if value is not None:", "        found.append(value)"]
        elif kind == _SENTINEL:
            lines += [f"    value = node.{name}", "    if value is not DEFAULT:", "        found.append(value)"]
        else:
            lines.append(f"    found.extend(nodes_in(node.{name}))")
    lines.append("    return found")
    namespace: dict[str, Any] = {"DEFAULT": cst.MaybeSentinel.DEFAULT, "nodes_in": _nodes_in}
    exec(compile("\n".join(lines), f"<trllint children of {node_type.__name__}>", "exec"), namespace)
    read: Children = namespace["read"]
    return read


_READERS: dict[type, Children] = {}
_SYNTAX_READERS: dict[type, Children] = {}


def reader(node_type: type, *, syntax_only: bool = False) -> Children:
    """The children function of ``node_type``: all children, or (``syntax_only``) all but the
    fields that hold only whitespace, comments and punctuation."""
    readers = _SYNTAX_READERS if syntax_only else _READERS
    read = readers.get(node_type)
    if read is None:
        fields = child_fields(node_type)
        if syntax_only:
            fields = tuple((name, kind) for name, kind in fields if not _token_field(node_type, name))
        read = readers[node_type] = _compile_reader(node_type, fields)
    return read


@functools.lru_cache(maxsize=None)
def _field_reader(node_type: type, field: str, kind: str, syntax_only: bool) -> Children:
    """The children of one field (for field hooks); none for a token field of a syntax-only walk."""
    skipped = syntax_only and _token_field(node_type, field)
    return _compile_reader(node_type, () if skipped else ((field, kind),))


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` without building anything."""
    return reader(type(node))(node)


def syntax_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` less whitespace, comments and punctuation (operators and brackets):
    what an analysis of the code's meaning looks at."""
    return reader(type(node), syntax_only=True)(node)


# What answers ``identifiers`` for an analysis: the function itself, or the semantic model's
# memo of it (``SemanticModel.identifiers``).
Identifiers = Callable[[cst.CSTNode], frozenset[str]]


def identifiers(node: cst.CSTNode) -> frozenset[str]:
    """Every ``Name`` and attribute name in ``node``: a cheap first test for the analyses that
    look for a name by its last part (most expressions hold none of the names they look for)."""
    # Asked of every function and assigned value of a file: node types are compared exactly (no
    # LibCST class derives from Name or Attribute; `isinstance` on them goes through ABCMeta), and
    # each type's reader is looked up in the table directly.
    found: set[str] = set()
    pending = [node]
    readers = _SYNTAX_READERS
    name_type, attribute_type = cst.Name, cst.Attribute
    while pending:
        current = pending.pop()
        node_type = type(current)
        if node_type is name_type:
            found.add(current.value)  # type: ignore[attr-defined]  # a Name
        elif node_type is attribute_type:
            found.add(current.attr.value)  # type: ignore[attr-defined]  # an Attribute
        read = readers.get(node_type)
        if read is None:
            read = reader(node_type, syntax_only=True)
        if read is not _no_children:
            pending.extend(read(current))
    return frozenset(found)


def of_types(node: cst.CSTNode, wanted: frozenset[type], skipped: frozenset[type] = frozenset()) -> list[Any]:
    """The nodes under ``node`` (itself included) whose type is in ``wanted`` (``node_types``),
    in the order a walk meets them, neither meeting nor entering one whose type is in
    ``skipped``: for the analyses that collect one kind of node (the calls a function runs)
    over whole functions."""
    found: list[Any] = []
    pending = [node]
    readers = _SYNTAX_READERS
    while pending:
        current = pending.pop()
        node_type = type(current)
        if node_type in wanted:
            found.append(current)
        read = readers.get(node_type)
        if read is None:
            read = reader(node_type, syntax_only=True)
        if read is _no_children:
            continue
        below = read(current)
        if skipped:
            below = [child for child in below if type(child) not in skipped]
        below.reverse()  # a fresh list
        pending.extend(below)
    return found


# Nodes that hold statements without being one: a statement lies only in these or in another
# statement, never in an expression.
_STATEMENT_HOLDERS = node_types(cst.BaseSuite, cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)
_SMALL_STATEMENTS = node_types(cst.BaseSmallStatement)
_STATEMENTS = node_types(cst.BaseCompoundStatement, cst.SimpleStatementLine)
_DEFINITIONS = frozenset((cst.FunctionDef, cst.ClassDef))


def statements(node: cst.CSTNode, *, into_definitions: bool = True) -> list[cst.CSTNode]:
    """Every statement under ``node`` (compound ones, lines of simple ones, and the small
    statements on those lines), in the order a walk meets them, without entering expressions:
    for analyses that look only at statements (assignments, definitions), a fraction of a walk.
    Without ``into_definitions``, a function or class under ``node`` is listed but not entered
    (the statements of one scope)."""
    found: list[cst.CSTNode] = []
    _collect_statements(node, found, into_definitions)
    return found


def _collect_statements(current: cst.CSTNode, found: list[cst.CSTNode], into_definitions: bool) -> None:
    # A function of its own, not a closure: a nested function that calls itself is a reference
    # cycle, which would keep ``found`` (and every statement in it) alive until the collector runs.
    for child in syntax_children(current):
        kind = type(child)
        if kind in _SMALL_STATEMENTS:
            found.append(child)
        elif kind in _STATEMENTS:
            found.append(child)
            if into_definitions or kind not in _DEFINITIONS:
                _collect_statements(child, found, into_definitions)
        elif kind in _STATEMENT_HOLDERS:
            _collect_statements(child, found, into_definitions)


# What a def or a class can lie in: compound statements and the blocks and clauses they hold.
_HOLDS_DEFINITIONS = _STATEMENT_HOLDERS | node_types(cst.BaseCompoundStatement)


def path_to_definition(root: cst.CSTNode, definition: cst.FunctionDef | cst.ClassDef) -> list[cst.CSTNode] | None:
    """The nodes from ``root`` down to ``definition``'s parent (None when it is not under
    ``root``): found through statements and the blocks that hold them, never an expression,
    where a definition cannot lie."""
    came_from: dict[int, cst.CSTNode] = {}
    pending: list[cst.CSTNode] = [root]
    while pending:
        current = pending.pop()
        for child in syntax_children(current):
            if child is definition:
                path = [current]
                while id(path[-1]) in came_from:
                    path.append(came_from[id(path[-1])])
                path.reverse()
                return path
            if type(child) in _HOLDS_DEFINITIONS:
                came_from[id(child)] = current
                pending.append(child)
    return None


def hooks_tokens(visitor_type: type) -> bool:
    """Whether a visitor class has a method for any whitespace or punctuation node type (or for
    a field of one): only then must a walk descend into them."""
    for klass in visitor_type.__mro__:
        # LibCST's visitor bases define a no-op stub for every node type; only the classes
        # written on top of them can add a real hook.
        if klass.__module__.startswith("libcst."):
            continue
        for name, method in vars(klass).items():
            if name.startswith(("visit_", "leave_")) and name.split("_", 2)[1] in _TOKEN_NAMES:
                if not is_no_op(method):
                    return True
    return False


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads: ``visit_X`` returning False skips
    the children, ``leave_X(original_node)`` follows them."""
    visitor_type = type(visitor)
    generic = visitor_type.on_visit is not cst.CSTVisitor.on_visit or visitor_type.on_leave is not cst.CSTVisitor.on_leave
    if generic:
        # A visitor that dispatches for itself may care about any node: it sees them all.
        enter_any, leave_any = visitor.on_visit, visitor.on_leave

        def walk_all(current: cst.CSTNode) -> None:
            if enter_any(current) is not False:
                for child in children(current):
                    walk_all(child)
            leave_any(current)

        walk_all(node)
        return
    syntax_only, hooks = _class_hooks(visitor_type)
    # A loop over a stack of its own, not a recursion: CPython 3.11 frees the chunk of its frame
    # stack that a deep call leaves and maps a new one when the next call reaches it again, so a
    # walk whose depth swings around that boundary node after node spends more time in mmap and
    # munmap than in the visitor (half a second of system time on a 7,000-line module, or
    # nothing, depending on how deep the walk starts). A leave hook waits on the stack as
    # (hook, node) until the node's children are done.
    pending: list[Any] = [node]
    while pending:
        current = pending.pop()
        if type(current) is tuple:
            current[0](visitor, current[1])
            continue
        node_type = type(current)
        entry = hooks.get(node_type)
        if entry is None:
            entry = hooks[node_type] = _hooks_for(visitor_type, node_type, syntax_only)
        enter, leave, read = entry
        if leave is not None:
            pending.append((leave, current))
        if (enter is None or enter(visitor, current) is not False) and read is not _no_children:
            below = read(current)  # a fresh list: reversed in place
            below.reverse()
            pending.extend(below)


_HOOKS_ATTRIBUTE = "_trllint_walk_hooks"

# A visitor class's visit_X or leave_X, called with the visitor and the node; None for LibCST's
# no-op stub.
ClassHook = Callable[[cst.CSTVisitor, cst.CSTNode], object] | None


def _class_hooks(visitor_type: type) -> tuple[bool, dict[type, tuple[ClassHook, ClassHook, Children]]]:
    """Whether the visitor class needs no whitespace or punctuation, and node type -> its visit
    and leave functions (None for LibCST's no-op stubs) and the children to walk: worked out
    once per class, for analyses that walk small subtrees thousands of times. Kept on the class
    itself, so that it goes with a class made per call."""
    found: tuple[bool, dict[type, tuple[ClassHook, ClassHook, Children]]] | None
    found = visitor_type.__dict__.get(_HOOKS_ATTRIBUTE)
    if found is None:
        found = (not hooks_tokens(visitor_type), {})
        setattr(visitor_type, _HOOKS_ATTRIBUTE, found)
    return found


def _hooks_for(visitor_type: type, node_type: type, syntax_only: bool) -> tuple[ClassHook, ClassHook, Children]:
    name = node_type.__name__
    return (
        _hook(visitor_type, f"visit_{name}"),
        _hook(visitor_type, f"leave_{name}"),
        reader(node_type, syntax_only=syntax_only),
    )


def _hook(visitor: object, name: str) -> Callable[..., object] | None:
    """The visitor's method ``name``, unless it is one of LibCST's no-op stubs (the visitor base
    classes define every ``visit_X``/``leave_X``/``visit_X_field`` as one)."""
    method = getattr(visitor, name, None)
    return None if method is None or is_no_op(method) else method


def visit_batched(node: cst.CSTNode, visitors: Sequence[cst.BatchableCSTVisitor]) -> None:
    """LibCST's ``visit_batched`` for read-only visitors: every visitor's ``visit_X`` before the
    children, every ``leave_X`` after, and ``visit_X_field`` / ``leave_X_field`` around each
    field's children; return values ignored, children always visited."""
    Hooks = list[Callable[[cst.CSTNode], object]]
    FieldHooks = list[tuple[Children, Hooks, Hooks]]
    table: dict[type, tuple[Hooks, Hooks, FieldHooks | None, Children]] = {}
    syntax_only = not any(hooks_tokens(type(v)) for v in visitors)

    def hooks_for(node_type: type) -> tuple[Hooks, Hooks, FieldHooks | None, Children]:
        name = node_type.__name__
        fields = child_fields(node_type)
        field_hooks = [
            (
                [m for v in visitors if (m := _hook(v, f"visit_{name}_{field}")) is not None],
                [m for v in visitors if (m := _hook(v, f"leave_{name}_{field}")) is not None],
            )
            for field, _ in fields
        ]
        per_field = None
        if any(enter or leave for enter, leave in field_hooks):
            per_field = [
                (_field_reader(node_type, field, kind, syntax_only), enter, leave)
                for (field, kind), (enter, leave) in zip(fields, field_hooks)
            ]
        return (
            [m for v in visitors if (m := _hook(v, f"visit_{name}")) is not None],
            [m for v in visitors if (m := _hook(v, f"leave_{name}")) is not None],
            per_field,
            reader(node_type, syntax_only=syntax_only),
        )

    def walk(current: cst.CSTNode) -> None:
        node_type = type(current)
        hooks = table.get(node_type)
        if hooks is None:
            hooks = table[node_type] = hooks_for(node_type)
        for method in hooks[0]:
            method(current)
        if hooks[2] is None:
            for child in hooks[3](current):
                walk(child)
        else:  # rare: some visitor watches a field of this node type
            for read, enter, leave in hooks[2]:
                for method in enter:
                    method(current)
                for child in read(current):
                    walk(child)
                for method in leave:
                    method(current)
        for method in hooks[1]:
            method(current)

    try:
        walk(node)
    finally:
        # `walk` calls itself through its closure: a reference cycle (holding the visitors and
        # their bound hooks) that only the collector would free. Deleting the name breaks it.
        del walk
