"""Before LibCST parses a file: which of its tests may read the rank, from CPython's tree.

The rank facts (``trllint.facts.ranks.RankFacts``) find every rank read or rank test through a
name: one every rank read goes through (``names_a_rank``: ``local_rank``, ``is_main_process``,
``get_rank``, ``environ``), or one the file binds to such a read (``_follow_assignments``). The
code gates of the rules that ask them (TRL006, TRL007) ask the same of CPython's tree, as a
superset: a test may read the rank when a word of it is such a name, or the last part of a name
bound only by plain assignments, each of a value that spells one. The facts follow two rounds of
bindings; this follows every round, and asks no more of a value than that it spells one.
"""

from __future__ import annotations

import ast
from typing import Iterable

from trllint.core.ast_walk import assigned_names, nodes
from trllint.facts.ranks import MAIN_ONLY_DECORATORS, names_a_rank


class RankWords:
    """The names of one file that may hold a rank (read once from its nodes)."""

    def __init__(self, every_node: Iterable[ast.AST]) -> None:
        # Each dotted name an assignment binds -> each value bound to it (None: a binding the rank
        # facts do not follow: an unpacking, a loop, `+=`, `with`/`except ... as`).
        bindings: dict[str, list[ast.expr | None]] = {}
        for node in every_node:
            kind = type(node)
            if kind is ast.Assign or (kind is ast.AnnAssign and node.value is not None):  # type: ignore[attr-defined]
                targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
                for target in targets:
                    whole = type(target) is ast.Name or type(target) is ast.Attribute
                    for name in assigned_names(target):
                        bindings.setdefault(name, []).append(node.value if whole else None)  # type: ignore[attr-defined]
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.AugAssign:
                _not_followed(bindings, node.target)  # type: ignore[attr-defined]
            elif kind is ast.With or kind is ast.AsyncWith:
                for item in node.items:  # type: ignore[attr-defined]
                    if item.optional_vars is not None:
                        _not_followed(bindings, item.optional_vars)
            elif kind is ast.Try:
                for handler in node.handlers:  # type: ignore[attr-defined]
                    if handler.name:
                        bindings.setdefault(handler.name, []).append(None)
        self.names = _followed(bindings)
        self._tests: dict[int, bool] = {}

    def may_read_rank(self, test: ast.AST) -> bool:
        """A word of ``test`` may lead to the rank (``RankFacts.reads_rank``, ``splits_ranks``)."""
        key = id(test)
        if key not in self._tests:
            self._tests[key] = any(name in self.names or names_a_rank(name) for name in identifiers(test))
        return self._tests[key]


def rank_only_decorator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A decorator of ``function`` may run it on some ranks only (``RankFacts.main_only_decorator``)."""
    return any(not MAIN_ONLY_DECORATORS.isdisjoint(identifiers(decorator)) for decorator in function.decorator_list)


def identifiers(node: ast.AST) -> set[str]:
    """Every name in ``node``, as ``trllint.core.cst.walk.identifiers`` reads LibCST's ``Name``
    nodes: names, attribute names, and the names of keyword arguments (``f(rank=0)``) and
    parameters (a lambda's), which CPython keeps as strings."""
    found: set[str] = set()
    for child in (node, *nodes(node)):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
        elif isinstance(child, ast.keyword) and child.arg is not None:
            found.add(child.arg)
        elif isinstance(child, ast.arg):
            found.add(child.arg)
    return found


def _not_followed(bindings: dict[str, list[ast.expr | None]], target: ast.expr) -> None:
    for name in assigned_names(target):
        bindings.setdefault(name, []).append(None)


def _followed(bindings: dict[str, list[ast.expr | None]]) -> set[str]:
    """The last parts of the names the rank facts may find a rank index or predicate: a name all
    of whose bindings are plain assignments, each of a value spelling a rank name or such a name."""
    words: dict[int, set[str]] = {}  # each value's words, read once, and only for a name followed

    def spelled(value: ast.expr) -> set[str]:
        if id(value) not in words:
            words[id(value)] = identifiers(value)
        return words[id(value)]

    followed = [
        (name.rsplit(".", 1)[-1], [spelled(value) for value in values if value is not None])
        for name, values in bindings.items()
        if all(value is not None for value in values)
    ]
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for last, values in followed:
            if last in found:
                continue
            if all(any(word in found or names_a_rank(word) for word in spelled) for spelled in values):
                found.add(last)
                changed = True
    return found
