"""Each node's parent, the same map as LibCST's ParentNodeProvider at a fraction of the cost.

LibCST's provider walks the tree with ``node.visit`` and asks every node for its ``children``;
both rebuild each node (``_visit_and_replace_children``), so the map costs about four times the
parse of the file. The children of a node are exactly the nodes in its dataclass fields, so
reading the fields directly gives the same map without building anything.

Two thirds of the nodes are whitespace and punctuation, whose parents rules hardly ever ask:
the map links the other third first and the rest only when one of them is asked for.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.walk import TOKEN_TYPES, Children, children, syntax_children
from trllint.core.cst.private import WholeModuleProvider


class ParentMap(dict[cst.CSTNode, cst.CSTNode]):
    """node -> parent for every node of a module but its root; a mapping like LibCST's."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self._module = module
        self._complete = False
        self._link(syntax_children)

    def _link(self, read: Children) -> None:
        pending: list[cst.CSTNode] = [self._module]
        while pending:
            node = pending.pop()
            for child in read(node):
                self[child] = node
                pending.append(child)

    def complete(self) -> ParentMap:
        """Link whitespace and punctuation too (done on the first question about one)."""
        if not self._complete:
            self._complete = True
            self._link(children)
        return self

    def _may_link(self, node: object) -> bool:
        # Every other node is linked from the start: asking for the root's parent, or a node of
        # another tree, must not pay for linking the tokens.
        return not self._complete and type(node) in TOKEN_TYPES

    def __missing__(self, node: cst.CSTNode) -> cst.CSTNode:
        if not self._may_link(node):
            raise KeyError(node)
        return self.complete()[node]

    def __contains__(self, node: object) -> bool:
        return dict.__contains__(self, node) or (self._may_link(node) and dict.__contains__(self.complete(), node))

    # One signature for dict.get's three overloads: callers pass a node as default, or none.
    def get(self, node: cst.CSTNode, default: cst.CSTNode | None = None) -> cst.CSTNode | None:  # type: ignore[override]
        return self[node] if node in self else default


def parent_map(module: cst.Module) -> ParentMap:
    return ParentMap(module)


class ParentProvider(WholeModuleProvider):
    """Drop-in for ``libcst.metadata.ParentNodeProvider`` (declare it, ask it the same way)."""

    def compute(self, module: cst.Module) -> ParentMap:
        return parent_map(module)
