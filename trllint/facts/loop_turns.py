"""What a loop's previous turn leaves for a statement of its body to read.

``ScopeBindings`` follows a scope once, in statement order, so a read sees the assignments above
it. In a loop it may also see one made below it in the body, on the previous turn:

    last = 0.0
    for batch in loader:
        done = last < 0.01           # reads the `last` of the line below, from the previous turn
        last = model(batch).item()

unless every turn rebinds the name before the read (a line of the body itself, not one under a
branch, a nested loop or a ``try``, which a turn may skip), as the loop's own target is.
"""

from __future__ import annotations

import libcst as cst


class _Loop:
    __slots__ = ("start", "end", "rebound")

    def __init__(self, start: int, end: int, rebound: dict[str, int]) -> None:
        self.start = start  # the loop statement's order
        self.end = end  # the order of the last statement of its body
        self.rebound = rebound  # name -> the first order at which every turn binds it


class LoopTurns:
    """The loops of one scope, recorded as ``ScopeBindings`` walks it."""

    def __init__(self) -> None:
        self._loops: list[_Loop] = []
        # The names every turn of the innermost loop being walked binds, while the walk is on a
        # line every turn runs; None elsewhere.
        self._every_turn: dict[str, int] | None = None

    def enter(self, statement: cst.BaseCompoundStatement) -> dict[str, int] | None:
        """Start walking ``statement``; returns what ``resume`` needs when it is done."""
        outer = self._every_turn
        if isinstance(statement, (cst.For, cst.While)):
            self._every_turn = {}  # the loop's target is bound on every turn, before its body
        elif not isinstance(statement, cst.With):
            self._every_turn = None  # a branch or a `try` may be skipped
        return outer

    def body_walked(self, start: int, end: int) -> None:
        """The body of the loop ordered ``start`` (its statements ``start + 1 .. end``) is walked."""
        self._loops.append(_Loop(start, end, self._every_turn or {}))
        self._every_turn = None  # the `else` clause runs once, after the last turn

    def resume(self, outer: dict[str, int] | None) -> None:
        self._every_turn = outer

    def bound(self, name: str, order: int) -> None:
        if self._every_turn is not None:
            self._every_turn.setdefault(name, order)

    def carried_until(self, name: str, order: int) -> int | None:
        """The last order of the loop whose previous turn may hand statement ``order`` a binding
        of ``name`` made below it; None when no loop around ``order`` can."""
        reach = None
        around = sorted((loop for loop in self._loops if loop.start < order <= loop.end), key=_start, reverse=True)
        for loop in around:  # innermost first: a rebinding there holds for every loop outside it
            if loop.rebound.get(name, order) < order:
                break
            reach = loop.end
        return reach


def _start(loop: _Loop) -> int:
    return loop.start
