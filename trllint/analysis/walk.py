"""Walking a LibCST tree without rebuilding it.

LibCST's ``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``),
even for a visitor that changes nothing: a traversal costs about as much as the parse. These
walks read the children straight from the node fields, in the order LibCST itself visits them
(read once per node class from its ``_visit_and_replace_children``), and call the same
``visit_<Node>`` / ``leave_<Node>`` methods, so a visitor behaves as under ``node.visit``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, Callable, Sequence

import libcst as cst

_VISITED_FIELD = re.compile(r"visit_(\w+)\(\s*self,\s*\"(\w+)\"")
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


def child_fields(node_type: type) -> tuple[tuple[str, str], ...]:
    """(field, kind) for the fields of ``node_type`` that hold children, in LibCST's visiting
    (= source) order; kind says whether the field holds one node, maybe one, or a sequence."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        try:
            source = inspect.getsource(node_type._visit_and_replace_children)
            found = [(name, _KINDS.get(helper, "")) for helper, name in _VISITED_FIELD.findall(source)]
        except (OSError, TypeError):
            found = []
        if not found or any(not kind for _, kind in found):
            # No source to read (or a helper we do not know): decide per value, in dataclass order.
            found = [(f.name, "") for f in dataclasses.fields(node_type) if f.type not in ("str", "bool", "int")]
        kinds: dict[str, str] = {}
        for name, kind in found:  # a field visited two ways (ImportFrom.names): decide per value
            kinds[name] = kind if kinds.get(name, kind) == kind else ""
        fields = _CHILD_FIELDS[node_type] = tuple(kinds.items())
    return fields


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` without building anything."""
    found: list[cst.CSTNode] = []
    for name, kind in child_fields(type(node)):
        value = getattr(node, name)
        if kind == _MANY:
            if value:  # LibCST lets a few sequence fields be None
                found.extend(value)
        elif kind == _ONE:
            found.append(value)
        elif kind == _OPTIONAL:
            if value is not None:
                found.append(value)
        elif kind == _SENTINEL:
            if value is not cst.MaybeSentinel.DEFAULT:
                found.append(value)
        elif isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads: ``visit_X`` returning False skips
    the children, ``leave_X(original_node)`` follows them."""
    hooks: dict[type, tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]] = {}
    generic = type(visitor).on_visit is not cst.CSTVisitor.on_visit or type(visitor).on_leave is not cst.CSTVisitor.on_leave

    def walk(current: cst.CSTNode) -> None:
        node_type = type(current)
        pair = hooks.get(node_type)
        if pair is None:
            name = node_type.__name__
            if generic:  # the visitor dispatches for itself
                pair = (visitor.on_visit, visitor.on_leave)
            else:
                pair = (_hook(visitor, f"visit_{name}"), _hook(visitor, f"leave_{name}"))
            hooks[node_type] = pair
        enter, leave = pair
        if enter is None or enter(current) is not False:
            for child in children(current):
                walk(child)
        if leave is not None:
            leave(current)

    walk(node)


def _hook(visitor: Any, name: str) -> Callable[[Any], Any] | None:
    """The visitor's method ``name``, unless it is one of LibCST's no-op stubs (the visitor base
    classes define every ``visit_X``/``leave_X``/``visit_X_field`` as one)."""
    method = getattr(visitor, name, None)
    return None if method is None or getattr(method, "_is_no_op", False) else method


def _field_children(node: cst.CSTNode, name: str, kind: str) -> list[cst.CSTNode]:
    value = getattr(node, name)
    if kind == _MANY:
        return list(value or ())
    if kind == _ONE:
        return [value]
    if isinstance(value, cst.CSTNode):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, cst.CSTNode)]
    return []


def visit_batched(node: cst.CSTNode, visitors: Sequence[cst.BatchableCSTVisitor]) -> None:
    """LibCST's ``visit_batched`` for read-only visitors: every visitor's ``visit_X`` before the
    children, every ``leave_X`` after, and ``visit_X_field`` / ``leave_X_field`` around each
    field's children; return values ignored, children always visited."""
    Hooks = list[Callable[[Any], Any]]
    table: dict[type, tuple[Hooks, Hooks, list[tuple[str, str, Hooks, Hooks]] | None]] = {}

    def hooks_for(node_type: type) -> tuple[Hooks, Hooks, list[tuple[str, str, Hooks, Hooks]] | None]:
        name = node_type.__name__
        per_field = []
        for field, kind in child_fields(node_type):
            enter = [m for v in visitors if (m := _hook(v, f"visit_{name}_{field}")) is not None]
            leave = [m for v in visitors if (m := _hook(v, f"leave_{name}_{field}")) is not None]
            per_field.append((field, kind, enter, leave))
        return (
            [m for v in visitors if (m := _hook(v, f"visit_{name}")) is not None],
            [m for v in visitors if (m := _hook(v, f"leave_{name}")) is not None],
            per_field if any(enter or leave for _, _, enter, leave in per_field) else None,
        )

    def walk(current: cst.CSTNode) -> None:
        node_type = type(current)
        hooks = table.get(node_type)
        if hooks is None:
            hooks = table[node_type] = hooks_for(node_type)
        for method in hooks[0]:
            method(current)
        if hooks[2] is None:
            for child in children(current):
                walk(child)
        else:  # rare: some visitor watches a field of this node type
            for field, kind, enter, leave in hooks[2]:
                for method in enter:
                    method(current)
                for child in _field_children(current, field, kind):
                    walk(child)
                for method in leave:
                    method(current)
        for method in hooks[1]:
            method(current)

    walk(node)
