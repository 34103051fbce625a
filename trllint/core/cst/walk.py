"""Walking a LibCST tree without rebuilding it.

LibCST's ``node.visit(visitor)`` rebuilds every node it passes, even for a visitor that changes
nothing: a traversal costs about as much as the parse. These walks read each node's children
from its fields (``trllint.core.cst.fields``, in the order LibCST visits them) and call the same
``visit_<Node>`` / ``leave_<Node>`` methods, so a read-only visitor behaves as under
``node.visit``.

Two thirds of a LibCST tree is whitespace, comments and punctuation (``SimpleWhitespace``,
``Comma``, ``LeftParen``...). A walk whose visitors hook none of those node types does not
descend into them: it calls exactly the same methods, on a third of the nodes.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import libcst as cst

from trllint.core.cst.fields import (
    SYNTAX_READERS,
    TOKEN_TYPES,
    Children,
    child_fields,
    children,
    field_node_types,
    field_reader,
    layout_of,
    no_children,
    node_types,
    reader,
    syntax_children,
)

# The child-field table's own helpers are used through this module too.
__all__ = [
    "TOKEN_TYPES", "Children", "Identifiers", "child_fields", "children", "field_node_types", "hooks_tokens",
    "identifiers", "node_types", "of_types", "path_to_definition", "reader", "statements", "syntax_children", "visit",
    "visit_batched",
]  # fmt: skip

_TOKEN_NAMES = frozenset(t.__name__ for t in TOKEN_TYPES)

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
    readers = SYNTAX_READERS
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
            read = reader(current, syntax_only=True)
        if read is not no_children:
            pending.extend(read(current))
    return frozenset(found)


def of_types(node: cst.CSTNode, wanted: frozenset[type], skipped: frozenset[type] = frozenset()) -> list[Any]:
    """The nodes under ``node`` (itself included) whose type is in ``wanted`` (``node_types``),
    in the order a walk meets them, neither meeting nor entering one whose type is in
    ``skipped``: for the analyses that collect one kind of node (the calls a function runs)
    over whole functions."""
    found: list[Any] = []
    pending = [node]
    readers = SYNTAX_READERS
    while pending:
        current = pending.pop()
        node_type = type(current)
        if node_type in wanted:
            found.append(current)
        read = readers.get(node_type)
        if read is None:
            read = reader(current, syntax_only=True)
        if read is no_children:
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
        # LibCST's visitor bases define an empty method for every node type; only the classes
        # written on top of them can add a real hook.
        if klass.__module__.startswith("libcst."):
            continue
        for name, method in vars(klass).items():
            if name.startswith(("visit_", "leave_")) and name.split("_", 2)[1] in _TOKEN_NAMES:
                if not _is_stub(method, name):
                    return True
    return False


def _is_stub(function: object, name: str) -> bool:
    """Whether ``function`` is the empty ``visit_X`` / ``leave_X`` / ``visit_X_field`` that
    LibCST's visitor bases define for every node type and field: a walk need not call it."""
    return function is getattr(cst.CSTVisitor, name, None) or function is getattr(cst.BatchableCSTVisitor, name, None)


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
    # A loop over a stack of its own, not a recursion: analyses walk deep expressions thousands
    # of times, and a loop costs no Python frame per node. A leave hook waits on the stack as
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
            entry = hooks[node_type] = _hooks_for(visitor_type, current, syntax_only)
        enter, leave, read = entry
        if leave is not None:
            pending.append((leave, current))
        if (enter is None or enter(visitor, current) is not False) and read is not no_children:
            below = read(current)  # a fresh list: reversed in place
            below.reverse()
            pending.extend(below)


_HOOKS_ATTRIBUTE = "_trllint_walk_hooks"

# A visitor class's visit_X or leave_X, called with the visitor and the node; None for LibCST's
# empty stub.
ClassHook = Callable[[cst.CSTVisitor, cst.CSTNode], object] | None


def _class_hooks(visitor_type: type) -> tuple[bool, dict[type, tuple[ClassHook, ClassHook, Children]]]:
    """Whether the visitor class needs no whitespace or punctuation, and node type -> its visit
    and leave functions (None for LibCST's empty stubs) and the children to walk: worked out
    once per class, for analyses that walk small subtrees thousands of times. Kept on the class
    itself, so that it goes with a class made per call."""
    found: tuple[bool, dict[type, tuple[ClassHook, ClassHook, Children]]] | None
    found = visitor_type.__dict__.get(_HOOKS_ATTRIBUTE)
    if found is None:
        found = (not hooks_tokens(visitor_type), {})
        setattr(visitor_type, _HOOKS_ATTRIBUTE, found)
    return found


def _hooks_for(visitor_type: type, node: cst.CSTNode, syntax_only: bool) -> tuple[ClassHook, ClassHook, Children]:
    name = type(node).__name__
    return (
        _hook(visitor_type, f"visit_{name}"),
        _hook(visitor_type, f"leave_{name}"),
        reader(node, syntax_only=syntax_only),
    )


def _hook(visitor: object, name: str) -> Callable[..., object] | None:
    """The visitor's method ``name``, unless it is one of LibCST's empty stubs."""
    method: Callable[..., object] | None = getattr(visitor, name, None)
    if method is None or _is_stub(getattr(method, "__func__", method), name):
        return None
    return method


def visit_batched(node: cst.CSTNode, visitors: Sequence[cst.BatchableCSTVisitor]) -> None:
    """LibCST's ``visit_batched`` for read-only visitors: every visitor's ``visit_X`` before the
    children, every ``leave_X`` after, and ``visit_X_field`` / ``leave_X_field`` around each
    field's children; return values ignored, children always visited."""
    Hooks = list[Callable[[cst.CSTNode], object]]
    FieldHooks = dict[str, tuple[Hooks, Hooks]]
    table: dict[type, tuple[Hooks, Hooks, FieldHooks | None, Children]] = {}
    syntax_only = not any(hooks_tokens(type(v)) for v in visitors)

    def methods(name: str) -> Hooks:
        return [m for v in visitors if (m := _hook(v, name)) is not None]

    def hooks_for(node: cst.CSTNode) -> tuple[Hooks, Hooks, FieldHooks | None, Children]:
        layout = layout_of(node)
        name = layout.node_type.__name__
        field_hooks = {
            field: (methods(f"visit_{name}_{field}"), methods(f"leave_{name}_{field}"))
            for field in {*layout.fields, *layout.node_fields}
        }
        watched = any(enter or leave for enter, leave in field_hooks.values())
        return methods(f"visit_{name}"), methods(f"leave_{name}"), field_hooks if watched else None, reader(node, syntax_only=syntax_only)

    def walk(current: cst.CSTNode) -> None:
        node_type = type(current)
        hooks = table.get(node_type)
        if hooks is None:
            hooks = table[node_type] = hooks_for(current)
        for method in hooks[0]:
            method(current)
        field_hooks = hooks[2]
        if field_hooks is None:
            for child in hooks[3](current):
                walk(child)
        else:  # rare: some visitor watches a field of this node type
            for field in child_fields(current):
                enter, leave = field_hooks.get(field, ([], []))
                for method in enter:
                    method(current)
                for child in field_reader(node_type, field, syntax_only)(current):
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
