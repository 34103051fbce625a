"""Before LibCST parses a file: may a sharded forward or generate of it run out of step? (CPython's tree)

Every TRL007 finding is a call ``ShardedGenerateOutOfStep._sharded_forward`` reads as a forward or
a ``generate`` of a sharded model, that either has a rank guard in its function
(``_rank_guard``) or is a ``generate`` handed ``synced_gpus``. DeepSpeed's engine calls
``self.module(...)`` forty times and tests no rank around any of them. Wherever it cannot tell,
this says it may:

- a forward or generate is ``x.generate(...)``, ``x.module(...)``, or a call of a name the file
  binds, anywhere and in any way (an unpacking, ``with ... as`` too), to an ``unwrap_model(...)``
  or a prepare call (by the method's name alone);
- a guard is a rank-only decorator on the call's innermost function, or, between the call and its
  function (a lambda or a class stops the way up), an ``if``, ``while`` or conditional expression
  whose test may read the rank (``trllint.facts.rank_words``), an ``and``/``or`` one of whose
  earlier operands may, or an earlier ``if`` of an enclosing block whose test may and that holds
  a ``return``, ``break`` or ``continue``.
"""

from __future__ import annotations

import ast

from trllint.core.ast_walk import assigned_names, dotted_name, parents
from trllint.facts.rank_words import RankWords, rank_only_decorator
from trllint.facts.wrapping import PREPARE_METHODS

# The methods whose result a name holds a sharded model by (``unwrap_call_of``, ``_prepared``).
_SHARDED_BY = frozenset({"unwrap_model", *PREPARE_METHODS})
_EXITS = (ast.Return, ast.Break, ast.Continue)
# Where ``_leaves`` stops looking for an exit: a definition, or a loop of the ``if``'s own.
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.For, ast.AsyncFor, ast.While)


def may_run_out_of_step(tree: ast.Module) -> bool:
    parent_of = parents(tree)
    calls = [node for node in parent_of if type(node) is ast.Call]
    sharded = {name for value, target in _bindings(parent_of) if _makes_sharded(value) for name in assigned_names(target)}
    guards: _Guards | None = None
    for call in calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr == "generate":
            if any(keyword.arg == "synced_gpus" for keyword in call.keywords):
                return True
        elif not ((type(func) is ast.Attribute and func.attr == "module") or (type(func) is ast.Name and func.id in sharded)):
            continue
        guards = guards or _Guards(parent_of)
        if guards.may_guard(call):
            return True
    return False


def _bindings(parent_of: dict[ast.AST, ast.AST]) -> list[tuple[ast.expr, ast.expr]]:
    """(value, target) of every binding whose value a name may then hold: an assignment, an
    annotated one, a walrus, a ``with ... as``."""
    found: list[tuple[ast.expr, ast.expr]] = []
    for node in parent_of:
        kind = type(node)
        if kind is ast.Assign:
            found += [(node.value, target) for target in node.targets]  # type: ignore[attr-defined]
        elif (kind is ast.AnnAssign and node.value is not None) or kind is ast.NamedExpr:  # type: ignore[attr-defined]
            found.append((node.value, node.target))  # type: ignore[attr-defined]
        elif kind is ast.With or kind is ast.AsyncWith:
            found += [(item.context_expr, item.optional_vars) for item in node.items if item.optional_vars is not None]  # type: ignore[attr-defined]
    return found


def _makes_sharded(value: ast.expr) -> bool:
    return type(value) is ast.Call and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in _SHARDED_BY  # type: ignore[attr-defined]


class _Guards:
    """``_rank_guard``'s way up from a call, on CPython's tree; each block's first exit found once."""

    def __init__(self, parent_of: dict[ast.AST, ast.AST]) -> None:
        self.parent_of = parent_of
        self.ranks = RankWords(parent_of)
        self._first_exit: dict[int, tuple[dict[int, int], int]] = {}  # a block -> (positions, first exit's)

    def may_guard(self, call: ast.Call) -> bool:
        parent_of = self.parent_of
        function = parent_of.get(call)
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = parent_of.get(function)
        if function is not None and rank_only_decorator(function):
            return True
        child: ast.AST = call
        parent = parent_of.get(child)
        while parent is not None:
            if isinstance(child, ast.stmt) and self._exit_before(parent, child):
                return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
                if self.ranks.may_read_rank(parent.test):
                    return True
            if isinstance(parent, ast.BoolOp):
                earlier = parent.values[: next(i for i, value in enumerate(parent.values) if value is child)]
                if any(self.ranks.may_read_rank(value) for value in earlier):
                    return True
            child, parent = parent, parent_of.get(parent)
        return False

    def _exit_before(self, parent: ast.AST, child: ast.stmt) -> bool:
        """An ``if`` before ``child`` in its block whose test may read the rank and that leaves."""
        for _, block in ast.iter_fields(parent):
            if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                continue
            if id(block) not in self._first_exit:
                positions = {id(statement): index for index, statement in enumerate(block)}
                first = next(
                    (i for i, s in enumerate(block) if type(s) is ast.If and self.ranks.may_read_rank(s.test) and _leaves(s)),
                    len(block),
                )
                self._first_exit[id(block)] = (positions, first)
            positions, first = self._first_exit[id(block)]
            if positions.get(id(child), -1) > first:
                return True
        return False


def _leaves(statement: ast.If) -> bool:
    """A return, break or continue in the ``if`` or its ``else``, not in a definition or loop inside it."""
    pending: list[ast.AST] = [*statement.body, *statement.orelse]
    while pending:
        node = pending.pop()
        if isinstance(node, _EXITS):
            return True
        if isinstance(node, _OWN_SCOPES):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False
