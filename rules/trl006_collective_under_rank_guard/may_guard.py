"""Before LibCST parses a file: may a collective of it sit behind a rank guard? (CPython's tree)

TRL006 reports a collective call, or a call of a function of the file that enters one, with a
rank guard between it and its function's start (``CollectiveUnderRankGuard.guard_of``): an ``if``
or ``else`` whose test splits the ranks, an earlier ``if`` of its block or of an enclosing one
that exits, or a rank-only decorator on its function. A library dense with collectives (DeepSpeed's
communication code) holds few such places; this finds whether a file may hold one for a fraction
of LibCST's parse, and wherever it cannot tell, it says it may:

- a collective is a call of a collective's name or of any function of the file, by name, whose
  body calls one (however deeply; the rule follows module functions and ``self`` methods only),
  but not a torch collective handed a process group (``group=``: only that group calls it);
- a test may split the ranks when a word of it may lead to the rank
  (``trllint.facts.rank_words``, which TRL007's gate asks too);
- an exit may be per rank when its ``if`` has no ``else`` and its body ends in a ``return`` under
  such a test, or in a ``continue`` or ``break`` (under a test on this rank's data, which the rule
  reads from the rank flow);
- a decorator is rank-only when it spells one of ``MAIN_ONLY_DECORATORS``.
"""

from __future__ import annotations

import ast
from functools import cached_property

from trllint.core.ast_walk import dotted_name, parents
from trllint.facts.rank_words import RankWords, rank_only_decorator

from .collectives import (
    DISTRIBUTED_MODULES,
    ACCELERATE_FUNCTIONS,
    ACCELERATOR_METHODS,
    COLLECTIVE_NAMES,
    TORCH_COLLECTIVES,
)

# The torch collectives no other collective shares a name with (``collective_of``'s order).
_GROUP_ONLY = frozenset(TORCH_COLLECTIVES) - {*ACCELERATE_FUNCTIONS, *ACCELERATOR_METHODS, "save_model", "save_checkpoint"}


def may_guard_a_collective(tree: ast.Module) -> bool:
    scan = _Scan(tree)
    return any(scan.may_be_guarded(call) for call in scan.entering_calls())


class _Scan:
    """One walk of the tree (each node's parent, then the calls and the assignments among them),
    then each call that may enter a collective is followed up to its function, as ``guard_of`` does."""

    def __init__(self, tree: ast.Module) -> None:
        self._parents = parents(tree)
        self._calls: list[ast.Call] = []
        self._defined: set[str] = set()  # the file's functions, by name
        for node in self._parents:
            kind = type(node)
            if kind is ast.Call:
                self._calls.append(node)  # type: ignore[arg-type]  # kind is ast.Call
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self._defined.add(node.name)  # type: ignore[attr-defined]
        self._entering = set(COLLECTIVE_NAMES)
        self._add_functions_entering()
        self._first_exit: dict[int, int] = {}

    # ---- what may be a collective, and what may test the rank ---------------------------------

    @staticmethod
    def _called(call: ast.Call) -> tuple[str, ...]:
        """The name the call spells: the rule matches collectives (``named_like_collective``) and
        the file's functions by it, never through an import's alias."""
        func = call.func
        if isinstance(func, ast.Attribute):
            return (func.attr,)
        if isinstance(func, ast.Name):
            return (func.id,)
        return ()

    def _names(self, call: ast.Call) -> tuple[str, ...]:
        """``_called``, but none for a torch collective on a process group (``group=``), which
        only that group's ranks call: ``collective_of`` reads it as no collective. Not for a name
        the file's own functions have, nor one accelerate's collectives have unless the call is
        spelled on torch's module (``dist.broadcast_object_list``: asked first)."""
        names = self._called(call)
        if names and names[0] not in self._defined and any(keyword.arg == "group" for keyword in call.keywords):
            if names[0] in _GROUP_ONLY or _torch_distributed(call.func):
                return ()
        return names

    def _enters(self, call: ast.Call) -> bool:
        return any(name in self._entering for name in self._names(call))

    def entering_calls(self) -> list[ast.Call]:
        return [call for call in self._calls if self._enters(call)]

    def _add_functions_entering(self) -> None:
        """Every function (by name) that calls a collective's name or such a function in its own
        body; a call in a lambda counts for the function around it. The rule follows module
        functions and ``self`` methods only."""
        callers: dict[str, set[str]] = {}  # a called name -> the functions whose calls name it
        for call in self._calls:
            function = self._function_of(call)
            if function is not None:
                for name in self._names(call):
                    callers.setdefault(name, set()).add(function)
        pending = [name for name in self._entering if name in callers]
        while pending:
            for caller in callers.get(pending.pop(), ()):
                if caller not in self._entering:
                    self._entering.add(caller)
                    pending.append(caller)

    def _function_of(self, node: ast.AST) -> str | None:
        """The innermost function the node is in (None at module level)."""
        parent = self._parents.get(node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = self._parents.get(parent)
        return parent.name if parent is not None else None

    @cached_property
    def _ranks(self) -> RankWords:
        return RankWords(self._parents)  # only a file with a collective asks

    def _tests_rank(self, test: ast.expr) -> bool:
        return self._ranks.may_read_rank(test)

    def _exits_per_rank(self, statement: ast.stmt) -> bool:
        """An ``if`` without ``else`` that may exit on some ranks only: its body ends in an exit
        (the rule's ``_exit_of``: ``raise`` crashes, it does not hang), a ``return`` under a test
        that may split the ranks, or a ``continue`` or ``break`` under any test."""
        if not isinstance(statement, ast.If) or statement.orelse:
            return False
        last = type(statement.body[-1])
        if last is ast.Return:
            return self._tests_rank(statement.test)
        return last is ast.Continue or last is ast.Break

    def _exit_before(self, block: list[ast.stmt], statement: ast.stmt) -> bool:
        key = id(block)
        if key not in self._first_exit:
            self._first_exit[key] = next((i for i, s in enumerate(block) if self._exits_per_rank(s)), len(block))
        first = self._first_exit[key]
        return first < len(block) and any(s is statement for s in block[first + 1 :])

    # ---- where a collective may be guarded ------------------------------------------------------

    def may_be_guarded(self, call: ast.Call) -> bool:
        """A guard may stand between the call and its function's start (``guard_of``'s way up)."""
        child: ast.AST = call
        parent = self._parents.get(child)
        while parent is not None:
            if isinstance(child, ast.stmt):  # an exit earlier in its block (a function's body too)
                for _, block in ast.iter_fields(parent):
                    if isinstance(block, list) and self._exit_before(block, child):
                        return True
            if isinstance(parent, (ast.Lambda, ast.ClassDef)):
                return False  # runs when called, not here
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return rank_only_decorator(parent)
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and self._tests_rank(parent.test):
                return True
            child, parent = parent, self._parents.get(parent)
        return False


def _torch_distributed(func: ast.expr) -> bool:
    """``dist.f``, ``torch.distributed.f``, ``deepspeed.comm.f``: what ``collective_of`` reads as
    torch's collective before any other (an import under another name aside: then it says no)."""
    name = dotted_name(func) or ""
    return name.split(".", 1)[0] == "dist" or name.startswith(DISTRIBUTED_MODULES)
