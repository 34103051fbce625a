"""One assignment of a name in a scope's flow (``ScopeBindings``), its state worked out lazily."""

from __future__ import annotations

from typing import Callable, Protocol

import libcst as cst

from trllint.facts.rank_lattice import Rank


class Flow(Protocol):
    """The flow a lazy binding belongs to, which works its state out (``ScopeBindings``)."""

    def _force(self, binding: Binding) -> None: ...


class Binding:
    """One assignment of a name, in a flow.

    Its state is worked out when something first reads it, not when the flow is built: most
    assignments of a function never reach a metric or a ``return``, and working theirs out would
    ask for the summary of every project helper they call. The flow works a state out at the
    assignment's own place in the statement order, as an eager walk would, so the answer is the
    same (see ``ScopeBindings._force``).
    """

    __slots__ = ("_value", "_state", "_statement", "plain", "resolve", "flow", "index", "resolving")

    def __init__(
        self,
        value: cst.BaseExpression | None,  # None: bound by a loop, a `with`, a parameter or a collective
        state: Rank | None,
        statement: cst.CSTNode | None,  # None: a join of two arms, until it is worked out
        plain: bool,  # `name = value` with one target: rewriting `value` changes only this name
    ) -> None:
        self._value = value
        self._state = state
        self._statement = statement
        self.plain = plain
        # While the state is not worked out: how (the state, or after an if/else the arm's
        # binding whose state, value and statement this one takes), and the flow that asks.
        self.resolve: Callable[[], Rank | tuple[Rank, Binding]] | None = None
        self.flow: Flow | None = None
        self.index = -1  # among its flow's lazy bindings, in the order they were made
        self.resolving = False

    @property
    def state(self) -> Rank:
        if self.flow is not None:
            self.flow._force(self)
            if self._state is None:
                return Rank.NO_DATA  # asked again while it is being worked out: see ScopeBindings._force
        return self._state  # type: ignore[return-value]  # set by _force, or at construction when eager

    @property
    def value(self) -> cst.BaseExpression | None:
        if self.flow is not None and self._statement is None:
            self.flow._force(self)  # a join of two arms takes the wider arm's value
        return self._value

    @property
    def statement(self) -> cst.CSTNode:
        if self.flow is not None and self._statement is None:
            self.flow._force(self)
        return self._statement  # type: ignore[return-value]  # a join's arm statement, set by _force
