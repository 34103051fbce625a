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
from typing import Any, Callable, Iterator, Sequence

import libcst as cst

_VISITED_FIELD = re.compile(r"visit_\w+\(\s*self,\s*\"(\w+)\"")
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields of ``node_type`` that hold children, in LibCST's visiting (= source) order."""
    names = _CHILD_FIELDS.get(node_type)
    if names is None:
        try:
            source = inspect.getsource(node_type._visit_and_replace_children)
            names = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))
        except (OSError, TypeError):
            names = ()
        if not names:  # no source to read: dataclass order, right for every child but whitespace
            names = tuple(f.name for f in dataclasses.fields(node_type) if f.type not in ("str", "bool", "int"))
        _CHILD_FIELDS[node_type] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node.children`` without building anything."""
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads: ``visit_X`` returning False skips
    the children, ``leave_X(original_node)`` follows them."""
    if visitor.on_visit(node):
        for child in children(node):
            visit(child, visitor)
    visitor.on_leave(node)


def visit_batched(node: cst.CSTNode, visitors: Sequence[cst.BatchableCSTVisitor]) -> None:
    """LibCST's ``visit_batched`` for read-only visitors: every visitor's ``visit_X`` before the
    children, every ``leave_X`` after; return values ignored, children always visited."""
    table: dict[type, tuple[list[Callable[[Any], Any]], list[Callable[[Any], Any]]]] = {}

    def walk(current: cst.CSTNode) -> None:
        node_type = type(current)
        hooks = table.get(node_type)
        if hooks is None:
            name = node_type.__name__
            hooks = table[node_type] = (
                [m for v in visitors if (m := getattr(v, f"visit_{name}", None)) is not None],
                [m for v in visitors if (m := getattr(v, f"leave_{name}", None)) is not None],
            )
        for method in hooks[0]:
            method(current)
        for child in children(current):
            walk(child)
        for method in hooks[1]:
            method(current)

    walk(node)
