"""Before LibCST parses a file: may a collective of it sit behind a rank guard? (CPython's tree)

TRL006 reports a collective call, or a call of a function of the file that enters one, with a
rank guard between it and its function's start (``CollectiveUnderRankGuard.guard_of``): an ``if``
or ``else`` whose test splits the ranks, an earlier ``if`` of its block or of an enclosing one
that exits, or a rank-only decorator on its function. A library dense with collectives (DeepSpeed's
communication code) holds few such places; this finds whether a file may hold one for a fraction
of LibCST's parse, and wherever it cannot tell, it says it may:

- a collective is a call of a collective's name or of any function of the file, by name, whose
  body calls one (however deeply; the rule follows module functions and ``self`` methods only);
- a test may split the ranks when it spells a name every rank test goes through
  (``trllint.facts.ranks.names_a_rank``) or one the file assigns, anywhere, a value that spells one;
- an exit may be per rank when its ``if`` has no ``else`` and either such a test or a ``continue``
  or ``break`` in its body (a test on this rank's data, which the rule reads from the rank flow);
- a decorator is rank-only when it spells one of ``MAIN_ONLY_DECORATORS``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from trllint.facts.ranks import MAIN_ONLY_DECORATORS, names_a_rank

from .collectives import COLLECTIVE_NAMES


def may_guard_a_collective(tree: ast.Module) -> bool:
    return _Scan(tree).found


class _Scan:
    def __init__(self, tree: ast.Module) -> None:
        self._imported_as: dict[str, str] = {}
        assignments: list[tuple[list[str], set[str]]] = []
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                assignments.append(([n for t in node.targets for n in _bound(t)], _identifiers(node.value)))
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                assignments.append((_bound(node.target), _identifiers(node.value)))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname:
                        self._imported_as[alias.asname] = alias.name.rsplit(".", 1)[-1]
        self._rank_names = _rank_names(assignments)
        self._entering = set(COLLECTIVE_NAMES)
        self._add_functions_entering(functions)
        self.found = self._block(tree.body, guarded=False)

    # ---- what may be a collective, and what may test the rank ---------------------------------

    def _called(self, call: ast.Call) -> tuple[str, ...]:
        func = call.func
        if isinstance(func, ast.Attribute):
            return (func.attr,)
        if isinstance(func, ast.Name):
            return (func.id, self._imported_as.get(func.id, func.id))
        return ()

    def _enters(self, call: ast.Call) -> bool:
        return any(name in self._entering for name in self._called(call))

    def _add_functions_entering(self, functions: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> None:
        calls = {id(f): [n for n in ast.walk(f) if isinstance(n, ast.Call)] for f in functions}
        changed = True
        while changed:
            changed = False
            for function in functions:
                if function.name not in self._entering and any(self._enters(call) for call in calls[id(function)]):
                    self._entering.add(function.name)
                    changed = True

    def _tests_rank(self, test: ast.expr) -> bool:
        return any(name in self._rank_names or names_a_rank(name) for name in _identifiers(test))

    def _exits_per_rank(self, statement: ast.stmt) -> bool:
        """An ``if`` without ``else`` that may exit on some ranks only."""
        if not isinstance(statement, ast.If) or statement.orelse:
            return False
        return self._tests_rank(statement.test) or any(
            isinstance(node, (ast.Continue, ast.Break)) for body in statement.body for node in ast.walk(body)
        )

    # ---- where a collective may be guarded ------------------------------------------------------

    def _block(self, body: Sequence[ast.stmt], guarded: bool) -> bool:
        for statement in body:
            if self._statement(statement, guarded):
                return True
            guarded = guarded or self._exits_per_rank(statement)  # what follows may be after an exit
        return False

    def _statement(self, node: ast.stmt, guarded: bool) -> bool:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Decorators, defaults and annotations run where the function is defined; its body when
            # called, behind no guard of the caller's but its own decorators.
            if any(self._node(child, guarded) for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else []))):
                return True
            rank_only = any(not MAIN_ONLY_DECORATORS.isdisjoint(_identifiers(d)) for d in node.decorator_list)
            return self._block(node.body, rank_only)
        if isinstance(node, ast.If):
            inside = guarded or self._tests_rank(node.test)
            return self._expression(node.test, guarded) or self._block(node.body, inside) or self._block(node.orelse, inside)
        return self._node(node, guarded)

    def _node(self, node: ast.AST, guarded: bool) -> bool:
        """Any other node: its statement lists as blocks, its expressions as expressions."""
        if isinstance(node, ast.expr):
            return self._expression(node, guarded)
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    if self._block(value, guarded):
                        return True
                elif any(self._node(item, guarded) for item in value if isinstance(item, ast.AST)):
                    return True
            elif isinstance(value, ast.AST) and self._node(value, guarded):
                return True
        return False

    def _expression(self, node: ast.expr, guarded: bool) -> bool:
        pending: list[tuple[ast.AST, bool]] = [(node, guarded)]
        while pending:
            current, inside = pending.pop()
            if isinstance(current, ast.Call) and inside and self._enters(current):
                return True
            if isinstance(current, ast.IfExp):
                either = inside or self._tests_rank(current.test)
                pending += [(current.test, inside), (current.body, either), (current.orelse, either)]
            else:
                pending.extend((child, inside) for child in ast.iter_child_nodes(current))
        return False


def _identifiers(node: ast.AST) -> set[str]:
    """Every name and attribute name in ``node`` (what ``trllint.core.cst.walk.identifiers`` reads)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found


def _bound(target: ast.expr) -> list[str]:
    """The last part of each name an assignment target binds (``self.is_main`` binds ``is_main``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        return [target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _rank_names(assignments: list[tuple[list[str], set[str]]]) -> set[str]:
    """The names the file assigns a value that spells a rank name, or another such name (the rank
    facts follow two steps, `rank = dist.get_rank()` then `is_main = rank == 0`; this, every step)."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for targets, read in assignments:
            if any(name in found or names_a_rank(name) for name in read):
                new = [t for t in targets if t not in found]
                if new:
                    found.update(new)
                    changed = True
    return found
