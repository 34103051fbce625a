"""Every call of a file, in source order: what a whole-file check (``Rule.check_module``) judges
instead of collecting calls in a ``visit_Call`` of its own.

One walk per file however many rules ask (``model.once``); the walk skips whitespace, comments
and punctuation (``trllint.core.cst.walk``), a third of the tree.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.semantic.model import SemanticModel


def calls_in(model: SemanticModel) -> tuple[cst.Call, ...]:
    """The file's calls in the order a traversal meets them (an outer call before the calls in
    its arguments)."""

    def compute() -> tuple[cst.Call, ...]:
        collector = _Calls()
        walk.visit(model.source.module, collector)
        return tuple(collector.calls)

    return model.once((calls_in,), compute)


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
