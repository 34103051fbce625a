"""Which assignment of a name each statement of one scope reads, in statement order.

A scope's simple assignments are followed in statement order: branches in sequence (a name both
arms of an ``if``/``else`` assign holds what either may), loop bodies once. Cheap, syntactic, and
biased towards silence. Each binding's state is worked out when something first reads it
(``Binding``), by the flow that evaluates expressions (``trllint.facts.scope_flow.RankFlow``).
"""

from __future__ import annotations

from bisect import bisect_left
from contextlib import contextmanager
from functools import partial
from typing import Callable, Iterator

import libcst as cst

from trllint.core.cst.names import ImportMap, assigned_names, assignment_targets, call_name, dotted_name, parameters
from trllint.facts.rank_lattice import (
    GLOBAL_PARAMETERS,
    Rank,
    is_progress_bar,
    written_tensor,
    is_own_function_call,
    named_like_data,
    names_a_loader,
)
from trllint.facts.binding import Binding
from trllint.facts.in_place_reductions import (
    element_name, expression_statement_calls, reduced_in_block, reduced_name, skips_some_turn, spelled_element,
)
from trllint.facts.ranks import RankFacts


class ScopeBindings:
    """The bindings of one function (or a module's top-level code), made in statement order.

    How a value's state is worked out is the subclass's (``_state``, ``_element_state``,
    ``_iterable_state``, ``_data_parameter``); this walk only says which expression each name is
    bound to, where, and in which order."""

    def __init__(
        self,
        scope: cst.FunctionDef | cst.Module,
        imports: ImportMap,
        ranks: RankFacts,
        reduced_arguments: Callable[[cst.Call], list[int]],
        arguments_per_rank: bool,
        syncs_its_object: Callable[[cst.Call, str], bool] = lambda built, method: False,
    ) -> None:
        self.scope = scope
        self._imports = imports
        self._ranks = ranks
        self._reduced_arguments = reduced_arguments
        self._syncs_its_object = syncs_its_object
        self._arguments_per_rank = arguments_per_rank
        # > 0 while reading the arguments of a project helper: a parameter that is per-rank only
        # by its name reads as unknown there (see RankFlow._state).
        self._strict = 0
        self._hidden: frozenset[str] = frozenset()  # names the comprehension being read binds itself
        self._order: dict[int, int] = {}
        self._synthetic: list[cst.CSTNode] = []  # kept alive: their ids are keys of _order
        self._bindings: dict[str, list[tuple[int, Binding]]] = {}
        self._lazy: list[Binding] = []  # bindings whose state is not worked out yet, in order made
        self._reductions: set[int] = set()  # ids of the bindings an in-place collective made
        self._forced_upto = 0  # every lazy binding before this index is worked out
        self._depth = 0  # lazy bindings being worked out, one inside another
        self.statements: list[tuple[cst.CSTNode, cst.CSTNode]] = []  # (small statement, its line)
        if isinstance(scope, cst.FunctionDef):
            self._bind_parameters(scope)
            self._walk(scope.body)
        else:
            self._walk(scope)

    def release(self) -> None:
        """Unlink the bindings never worked out from this flow (they point at each other)."""
        for binding in self._lazy:
            binding.flow = binding.resolve = None
        self.__dict__.clear()

    def binding(self, name: str, at: cst.CSTNode | None) -> Binding | None:
        """The assignment of ``name`` that statement ``at`` reads."""
        return self._lookup(name, self._order.get(id(at), len(self._order) + 1))

    def reduced_in_place(self, name: str, at: cst.CSTNode | None) -> bool:
        """What ``name`` holds in statement ``at`` was last made by a collective that reduced it in
        place: ``dist.all_reduce(t)``, a helper that does, or a loop that reduces each of its
        elements (``for k in logs: dist.all_reduce(logs[k])``)."""
        binding = self.binding(name, at)
        return binding is not None and id(binding) in self._reductions

    # ---- how a state is worked out: the subclass's ---------------------------------------------

    def _state(self, node: cst.CSTNode, order: int) -> Rank:
        raise NotImplementedError

    def _element_state(self, call: cst.Call, index: int, count: int, order: int) -> Rank:
        raise NotImplementedError

    def _iterable_state(self, iterable: cst.BaseExpression, order: int) -> Rank:
        raise NotImplementedError

    def _data_parameter(self, function: cst.FunctionDef, name: str) -> Rank:
        raise NotImplementedError

    def _loader_parameter(self, function: cst.FunctionDef, name: str) -> Rank:
        raise NotImplementedError

    # ---- building the bindings ------------------------------------------------------------------

    def _bind_parameters(self, function: cst.FunctionDef) -> None:
        self._order[id(function)] = 0
        for param in parameters(function.params):
            name = param.name.value
            if self._arguments_per_rank:
                state = Rank.NO_DATA if name in ("self", "cls") else Rank.PER_RANK
                self._bind(name, Binding(None, state, function, False), 0)
                continue
            plain_state = Rank.GLOBAL if name in GLOBAL_PARAMETERS else Rank.NO_DATA
            if self._ranks.is_rank_index(param.name):
                plain_state = Rank.PER_RANK  # `def worker(rank, world_size)`: each process its own
            if param.default is None and named_like_data(param):
                self._bind(name, self._deferred(None, function, False, partial(self._data_parameter, function, name)), 0)
            elif param.default is None and names_a_loader(name):
                self._bind(name, self._deferred(None, function, False, partial(self._loader_parameter, function, name)), 0)
            else:
                self._bind(name, Binding(None, plain_state, function, False), 0)

    def _next(self, statement: cst.CSTNode) -> int:
        order = self._order[id(statement)] = len(self._order) + 1
        return order

    def _walk(self, block: cst.CSTNode | None) -> None:
        if isinstance(block, cst.SimpleStatementSuite):  # `for batch in loader: log(...)`
            order = self._next(block)
            for small in block.body:
                self.statements.append((small, block))
                self._simple(small, block, order)
            return
        for statement in getattr(block, "body", ()):
            if isinstance(statement, cst.SimpleStatementLine):
                order = self._next(statement)
                for small in statement.body:
                    self.statements.append((small, statement))
                    self._simple(small, statement, order)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue  # their own flows
            elif isinstance(statement, cst.BaseCompoundStatement):
                self._compound(statement)

    def _compound(self, statement: cst.BaseCompoundStatement) -> None:
        order = self._next(statement)
        if isinstance(statement, cst.For):
            self._bind_loop_target(statement.target, statement.iter, statement, order)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    state = partial(self._state, item.item, order)
                    for name in assigned_names(item.asname.name):
                        self._bind(name, self._deferred(None, statement, False, state), order)
        before_body = {name: len(bound) for name, bound in self._bindings.items()}
        self._walk(getattr(statement, "body", None))
        if isinstance(statement, cst.For):
            self._bind_reduced_by_loop(statement, order)
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self._walk(case.body)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            for handler in statement.handlers:
                self._walk(handler.body)
            if statement.finalbody is not None:
                self._walk(statement.finalbody.body)
        orelse = getattr(statement, "orelse", None)
        if isinstance(statement, cst.If) and isinstance(orelse, cst.Else):
            self._join_arms(orelse, before_body)
            return
        while orelse is not None:
            self._walk(orelse.body)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None

    def _join_arms(self, orelse: cst.Else, before_body: dict[str, int]) -> None:
        """After ``if``/``else``, a name both arms assign holds what either may: per-rank when one
        arm computes it from this rank's data (``accuracy = ...`` / ``accuracy = torch.tensor(0.0)``)."""
        body_bound = {n: b[-1][1] for n, b in self._bindings.items() if len(b) > before_body.get(n, 0)}
        else_start = {name: len(bound) for name, bound in self._bindings.items()}
        self._walk(orelse.body)
        else_bound = {n: b[-1][1] for n, b in self._bindings.items() if len(b) > else_start.get(n, 0)}
        # Each arm's binding was made in that arm's own statements, so the two never share one:
        # comparing their statements would work out a join's state (and the project summaries it
        # asks) while the flow is still being built.
        joined = {n for n in body_bound if n in else_bound}
        if not joined:
            return
        marker = cst.Pass()  # a statement of its own in the order: after both arms
        self._synthetic.append(marker)
        order = self._next(marker)
        for name in sorted(joined):
            self._bind(name, self._deferred(None, None, False, partial(_wider, body_bound[name], else_bound[name])), order)

    def _simple(self, small: cst.BaseSmallStatement, line: cst.CSTNode, order: int) -> None:
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = assignment_targets(small)
            plain = len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Attribute))
            for target in targets:
                self._bind_target(target, small.value, line, order, plain)
            if isinstance(small.value, cst.Call):
                # `handle = dist.all_reduce(x, async_op=True)`: the collective writes into `x` all the same.
                self._bind_collective_output(small.value, line, order)
        elif isinstance(small, cst.AugAssign):
            name = dotted_name(small.target)
            if name is not None:
                joined = partial(self._joined_state, small.target, small.value, order)
                self._bind(name, self._deferred(small.value, line, False, joined), order)
        else:
            for call in expression_statement_calls(small):
                self._bind_collective_output(call, line, order)
                for name in self._names_reduced_by_call(call, order):
                    self._bind_reduced(name, line, order)

    def _bind_target(
        self, target: cst.BaseExpression, value: cst.BaseExpression, line: cst.CSTNode, order: int, plain: bool
    ) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements):
                for t, v in zip(target.elements, value.elements):
                    self._bind_target(t.value, v.value, line, order, False)
                return
        if (
            isinstance(target, (cst.Tuple, cst.List))
            and isinstance(value, cst.Call)
            and is_own_function_call(value)
            and not any(isinstance(element, cst.StarredElement) for element in target.elements)
        ):
            # `losses, rewards, kl = self.loss(...)`: each name holds its own element of the tuple.
            count = len(target.elements)
            for index, element in enumerate(target.elements):
                element_state = partial(self._element_state, value, index, count, order)
                for name in assigned_names(element.value):
                    self._bind(name, self._deferred(value, line, False, element_state), order)
            return
        state = partial(self._state, value, order)
        for name in assigned_names(target):
            self._bind(name, self._deferred(value, line, plain, state), order)

    def _bind_loop_target(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, statement: cst.CSTNode, order: int
    ) -> None:
        visited = self._spellings_of(iterable, order)[-1]
        if isinstance(visited, cst.Call) and call_name(visited) in ("enumerate", "zip"):
            iterable = visited
        function = call_name(iterable) if isinstance(iterable, cst.Call) else None
        if (
            function in ("enumerate", "zip")
            and isinstance(iterable, cst.Call)
            and isinstance(target, (cst.Tuple, cst.List))
        ):
            parts = [a.value for a in iterable.args]
            if function == "enumerate":
                parts = [cst.Integer("0"), parts[0]] if parts else []
            if len(parts) == len(target.elements):
                for element, part in zip(target.elements, parts):
                    self._bind_loop_target(element.value, part, statement, order)
                return
        state = partial(self._iterable_state, iterable, order)
        for name in assigned_names(target):
            self._bind(name, self._deferred(None, statement, False, state), order)

    def _spellings_of(self, iterable: cst.BaseExpression, order: int, hops: int = 4) -> list[cst.BaseExpression]:
        """``iterable`` and each other spelling of the elements a loop over it visits, outermost
        first, the last the innermost: through a progress bar (``tqdm(enumerate(loader))`` visits
        what ``enumerate(loader)`` does), a reordering copy (``sorted(logs)``, ``list(...)``,
        ``tuple(...)``), a name bound to one of these, and a rank test's choice between a bar and the
        bare iterable (``tqdm(it) if is_main_process else it``): the same elements on every rank."""
        spellings = [iterable]
        for _ in range(hops):
            current = spellings[-1]
            if isinstance(current, cst.Name):
                binding = self._lookup(current.value, order)
                # A join of two arms has no one value until it is worked out: not asked while building.
                if binding is None or binding._statement is None or binding._value is None:
                    break
                spellings.append(binding._value)
            elif isinstance(current, cst.IfExp):
                body = self._spellings_of(current.body, order, hops - 1)[-1]
                orelse = self._spellings_of(current.orelse, order, hops - 1)[-1]
                code = cst.Module([]).code_for_node
                if "".join(code(body).split()) != "".join(code(orelse).split()):
                    break
                spellings.append(body)
            elif isinstance(current, cst.Call) and _visits_its_argument(current):
                spellings.append(current.args[0].value)
            else:
                break
        return spellings

    def _bind_collective_output(self, call: cst.Call, line: cst.CSTNode, order: int) -> None:
        written = written_tensor(call, self._imports)
        # `dist.all_reduce(logs[key].detach())` binds the element `logs[key]` (see `_reduced_element`).
        name = reduced_name(written) if written is not None else None
        if name is not None:
            self._bind_reduced(name, line, order)

    def _names_reduced_by_call(self, call: cst.Call, order: int) -> list[str]:
        """The names a call reduces in place: arguments a helper reduces (``all_reduce_mean(loss)``:
        see ``reduced_parameters``), or an object its method makes the same on every rank
        (``metric_logger.synchronize_between_processes()``: see ``object_syncing_methods``)."""
        if isinstance(call.func, cst.Attribute) and (receiver := dotted_name(call.func.value)) is not None:
            binding = self._lookup(receiver, order)
            built = binding.value if binding is not None else None
            if isinstance(built, cst.Call) and self._syncs_its_object(built, call.func.attr.value):
                return [receiver]
        positions = self._reduced_arguments(call)
        if not positions:
            return []
        plain: list[cst.Arg] = []
        for arg in call.args:
            if arg.star:
                break  # `f(*tensors)`: which parameter gets which is not written here
            if arg.keyword is None:
                plain.append(arg)
        return [name for i in positions if i < len(plain) and (name := dotted_name(plain[i].value)) is not None]

    def _bind_reduced_by_loop(self, loop: cst.For, order: int) -> None:
        """``for t in (correct, total): dist.all_reduce(t)``, ``for v in sums.values(): ...``,
        ``for k in sorted(sums): dist.all_reduce(sums[k].detach())`` and ``for k, v in
        losses.items(): losses[k] = reduce_dict(v)``: every element the loop visits is reduced in
        place or replaced by a global value (``reduced_in_block``) on every turn, so after the loop
        each of the names (or the whole container) is global.
        The loop's iterable is read in each of its spellings (``_spellings_of``), the first that
        names what the body reduces deciding."""
        if skips_some_turn(loop.body):
            return  # a turn that leaves early may skip its element
        target = dotted_name(loop.target)
        # `for key, value in sums.items()`: the key names the element the body replaces.
        pair = loop.target.elements if isinstance(loop.target, cst.Tuple) and len(loop.target.elements) == 2 else None
        key = dotted_name(pair[0].value) if pair is not None else None
        if target is None and key is None:
            return
        reduced = reduced_in_block(
            loop.body, self._imports, partial(self._names_reduced_by_call, order=order), self._state_at
        )
        names: list[str | None] = []
        for iterable in self._spellings_of(loop.iter, order):
            if isinstance(iterable, (cst.Tuple, cst.List)) and target in reduced:
                names = [dotted_name(element.value) for element in iterable.elements]
            elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
                container = dotted_name(iterable.func.value)
                method = iterable.func.attr.value
                # What the body must reduce for each element visited: the value itself, or the
                # entry its key names.
                if method == "values":
                    visited = target
                else:
                    index = {"keys": target, "items": key}.get(method)
                    visited = spelled_element(container, index) if index is not None else None
                if visited is not None and visited in reduced:
                    names = [container]
            elif target is not None and spelled_element(dotted_name(iterable), target) in reduced:
                names = [dotted_name(iterable)]
            if names:
                break
        known = [name for name in names if name is not None]
        if not known or len(known) != len(names):
            return
        marker = cst.Pass()  # a statement of its own in the order: after the loop
        self._synthetic.append(marker)
        after = self._next(marker)
        for name in known:
            self._bind_reduced(name, loop, after)

    def _state_at(self, value: cst.BaseExpression, statement: cst.CSTNode) -> Rank:
        return self._state(value, self._order[id(statement)])

    def _bind_reduced(self, name: str, statement: cst.CSTNode, order: int) -> None:
        binding = Binding(None, Rank.GLOBAL, statement, False)
        self._reductions.add(id(binding))
        self._bind(name, binding, order)

    def _bind(self, name: str, binding: Binding, order: int) -> None:
        self._bindings.setdefault(name, []).append((order, binding))

    def _joined_state(self, first: cst.CSTNode, second: cst.CSTNode, order: int) -> Rank:
        return max(self._state(first, order), self._state(second, order))

    def _deferred(
        self, value: cst.BaseExpression | None, statement: cst.CSTNode | None, plain: bool,
        resolve: Callable[[], Rank | tuple[Rank, Binding]],
    ) -> Binding:
        """A binding whose state ``resolve`` works out when it is first read (``statement`` None:
        a join of two arms, which takes the wider arm's value and statement too)."""
        binding = Binding(value, None, statement, plain)
        binding.resolve, binding.flow, binding.index = resolve, self, len(self._lazy)
        self._lazy.append(binding)
        return binding

    def _force(self, binding: Binding) -> None:
        """Work out a lazy binding's state, as the flow would have at the binding's own place."""
        if binding.resolving:
            # A recursive helper's question came back to the binding it started from: nothing is
            # proven about it yet (an eager walk read a flow under construction as unknown too).
            return
        if self._depth >= _LAZY_DEPTH:
            # A long chain of assignments (`x = f(x)` line after line): the earlier bindings are
            # worked out first, in order, each reading ones already done, so the stack stays flat.
            for earlier in self._lazy[self._forced_upto : binding.index]:
                if earlier.flow is not None:
                    self._resolve(earlier)
            self._forced_upto = max(self._forced_upto, binding.index)
        self._resolve(binding)

    def _resolve(self, binding: Binding) -> None:
        binding.resolving = True
        self._depth += 1
        strict, self._strict = self._strict, 0  # as when the flow is built: no helper's arguments
        hidden, self._hidden = self._hidden, frozenset()  # nor a comprehension's own names
        try:
            result = binding.resolve()  # type: ignore[misc]  # a binding is forced only while lazy, so set
        finally:
            self._strict = strict
            self._hidden = hidden
            self._depth -= 1
            binding.resolving = False
        if isinstance(result, tuple):
            state, wider = result
            binding._value, binding._statement = wider.value, wider.statement
        else:
            state = result
        binding._state, binding.resolve, binding.flow = state, None, None

    def _lookup(self, name: str, order: int) -> Binding | None:
        entry = self._lookup_entry(name, order)
        return entry[1] if entry is not None else None

    def _lookup_entry(self, name: str, order: int) -> tuple[int, Binding] | None:
        """The last binding of ``name`` made before statement ``order``, with the order it was made at."""
        # Bindings are made in statement order, so each name's list is sorted by order: a
        # binary search keeps a name assigned on every line of a long loop linear, not quadratic.
        bindings = self._bindings.get(name)
        if not bindings or (self._hidden and name.split(".", 1)[0] in self._hidden):
            return None
        before = bisect_left(bindings, order, key=_order_of)
        return bindings[before - 1] if before else None

    @contextmanager
    def _hiding(self, names: frozenset[str]) -> Iterator[None]:
        """Read a comprehension's own scope: the names its targets bind are not this scope's."""
        outer, self._hidden = self._hidden, self._hidden | names
        try:
            yield
        finally:
            self._hidden = outer

    def _reduced_element(self, node: cst.Subscript, order: int) -> Binding | None:
        """The in-place collective on ``logs[key]`` that a read of ``logs[key]`` in statement
        ``order`` sees: one made after the last binding of both ``logs`` and ``key`` (a rebound
        container or key names another element)."""
        element = element_name(node)
        found = self._lookup_entry(element, order) if element is not None else None
        if found is None:
            return None
        made, binding = found
        index = node.slice[0].slice
        for part in (node.value, index.value if isinstance(index, cst.Index) else None):
            entry = self._lookup_entry(dotted_name(part) or "", order)
            if entry is not None and entry[0] > made:
                return None
        return binding


def _order_of(entry: tuple[int, Binding]) -> int:
    return entry[0]


# Lazy bindings worked out one inside another before the earlier ones are worked out in order.
_LAZY_DEPTH = 24


def _wider(body: Binding, other: Binding) -> tuple[Rank, Binding]:
    """After ``if``/``else``: the state either arm's binding may hold, and the arm that holds it."""
    return max(body.state, other.state), (body if body.state >= other.state else other)


def _visits_its_argument(call: cst.Call) -> bool:
    """A loop over ``call`` visits the elements of its first argument: a progress bar around it, or
    a reordering copy of it (``sorted(logs, key=...)``, ``list(...)``, ``tuple(...)``)."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    only_keywords_after = all(arg.keyword is not None for arg in call.args[1:])
    return is_progress_bar(call) or (dotted_name(call.func) in ("sorted", "list", "tuple") and only_keywords_after)
