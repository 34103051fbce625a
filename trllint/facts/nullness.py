"""May this name be None here? Path-sensitive reasoning over one function, with guards.

``NullnessAnalysis.none_reasons(name, node)`` walks the function (or module) that holds ``node``
from its entry to the statement holding ``node``, along the one path of blocks that leads there,
and answers with the reasons ``name`` (a plain name or ``self.attr``) may be None on arrival; an
empty set means no reason is known. Along the way:

- ``name = None``, ``name = d.get(k)``, ``name = getattr(o, "a", None)`` make it possibly None;
  any other assignment (a constructor, a loader, ``name = other`` where ``other`` is never None)
  clears it; ``name = other`` carries ``other``'s reasons.
- A parameter is possibly None when its default is None or its annotation is ``Optional[...]``,
  ``... | None`` or ``Union[..., None]``; ``self.attr`` in a method starts as ``__init__`` leaves it.
- Branches join (a reason on any branch that falls through survives); a branch that returns,
  raises, breaks or continues does not fall through, so ``if x is None: return`` clears ``x``.
- Entering a branch applies its test: ``if x is not None:``, ``if x:``, the ``else`` of
  ``if x is None:``, ``isinstance(x, T)``, ``and``/``or``/``not`` combinations, ``while``
  tests and ``assert`` all clear ``x`` where they dominate the call; so does a statement that
  always reads ``x.attr`` or ``x[k]`` or calls ``x(...)``, since None would have raised there.
- Correlated tests count: a None assigned only under ``not flag`` (the ``else`` of ``if flag:``)
  does not reach a node under ``if flag:`` (or ``if other and flag:``) while ``flag`` is not
  bound again: the two tests agree, so that path is not one the program takes.
- Aliases count: after ``self.ref_model = ref_model`` (or ``ref_model = self.ref_model``), a
  guard or a dereference of either name clears both, until one of them is bound again. An alias
  holds after a branch only when it holds at the end of every arm.

No metadata beyond parent links is needed, so a rule can ask without the cost of LibCST's scope
providers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import libcst as cst

from trllint.core.cst.names import assigned_names, assignment_targets, dotted_name, is_none, parameters
from trllint.facts.none_syntax import (
    NOTHING,
    Reasons,
    dereferences,
    none_test_outcome,
    parameter_none_reasons,
    returns_none_sometimes,
)
from trllint.semantic.model import SemanticModel

if TYPE_CHECKING:  # annotations only: no runtime dependency on typing_extensions
    from typing_extensions import TypeIs

# How far ``a = b`` chains are followed (``a = b; b = a`` must not loop).
MAX_ALIAS_DEPTH = 4


class NullnessAnalysis:
    def __init__(self, parent_of: Callable[[cst.CSTNode], cst.CSTNode | None], module: cst.Module) -> None:
        self._parent_of = parent_of
        self.module = module
        self._init_exit: dict[tuple[int, str], Reasons] = {}

    # ---- questions -----------------------------------------------------------------------

    def none_reasons(
        self, name: str, node: cst.CSTNode, *, depth: int = 0, assume_at_entry: Reasons | None = None
    ) -> Reasons:
        """Why ``name`` may be None just before the statement holding ``node`` runs.

        ``assume_at_entry`` replaces what the scope's entry says of ``name``: "if this parameter
        were None, would it still be None here?" is how a helper's guards are judged.
        """
        chain = [node, *self._ancestors(node)]
        scope_index = next(
            (i for i, n in enumerate(chain) if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.Module))), None
        )
        if scope_index is None:
            return NOTHING
        scope = chain[scope_index]
        if not isinstance(scope, (cst.FunctionDef, cst.Module)):  # a lambda
            return NOTHING
        path = list(reversed(chain[:scope_index]))  # from the scope's block down to ``node``
        walker = _Walker(self, name, depth)
        if assume_at_entry is not None:
            entry = assume_at_entry
        elif isinstance(scope, cst.FunctionDef):
            entry = self._entry_reasons(name, scope, depth)
        else:
            entry = NOTHING
        statements = _statements(scope if isinstance(scope, cst.Module) else scope.body)
        return walker.descend(statements, entry, path, set(map(id, path)))

    def is_possibly_none(self, name: str, node: cst.CSTNode) -> bool:
        return bool(self.none_reasons(name, node))

    # ---- entry states ----------------------------------------------------------------------

    def _entry_reasons(self, name: str, function: cst.FunctionDef, depth: int) -> Reasons:
        for param in parameters(function.params, stars=True):
            if param.name.value == name:
                return parameter_none_reasons(param)
        if name.startswith("self.") and function.name.value != "__init__":
            cls = self._enclosing_class(function)
            init = _method(cls, "__init__") if cls is not None else None
            if init is not None and depth < MAX_ALIAS_DEPTH:
                key = (id(init), name)
                if key not in self._init_exit:
                    self._init_exit[key] = NOTHING  # a cycle through __init__ finds nothing
                    walker = _Walker(self, name, depth + 1)
                    after = walker.run_block(_statements(init.body), self._entry_reasons(name, init, depth + 1))
                    self._init_exit[key] = (after or NOTHING) | walker.at_return
                return self._init_exit[key]
        return NOTHING

    def _enclosing_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        parent = self._parent_of(function)
        if isinstance(parent, cst.IndentedBlock):
            parent = self._parent_of(parent)
        return parent if isinstance(parent, cst.ClassDef) else None

    def _ancestors(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        parent = self._parent_of(node)
        while parent is not None:
            yield parent
            parent = self._parent_of(parent)


class _Walker:
    """One name's possible-None reasons, statement by statement through one scope."""

    def __init__(self, analysis: NullnessAnalysis, name: str, depth: int) -> None:
        self.analysis = analysis
        self.name = name
        self.depth = depth
        self.at_return: Reasons = NOTHING  # reasons held at a `return` (for __init__'s exit)
        # Other names bound to the same object on every path here (`self.m = m`): a guard on
        # `m` is a guard on `self.m`.
        self.aliases: frozenset[str] = frozenset()
        # The tests known to hold where the walk is (``("flag", False)`` in the else of ``if
        # flag:``), and for each reason the tests that held wherever it was assigned.
        self.conditions: Conditions = frozenset()
        self.assigned_under: dict[str, Conditions] = {}

    def _names(self) -> frozenset[str]:
        return self.aliases | {self.name}

    def _dereferenced(self, node: cst.CSTNode) -> bool:
        return any(dereferences(node, name) for name in self._names())

    def _branches(self, start: frozenset[str], *arms: Callable[[], Reasons | None]) -> list[Reasons | None]:
        """Run each arm from the same aliases; afterwards keep the aliases every arm kept."""
        outcomes: list[Reasons | None] = []
        kept: frozenset[str] | None = None
        for arm in arms:
            self.aliases = start
            outcomes.append(arm())
            kept = self.aliases if kept is None else kept & self.aliases
        self.aliases = start if kept is None else kept
        return outcomes

    # The path to the node: run what comes before it, enter the blocks that hold it.
    def descend(
        self, statements: Sequence[cst.CSTNode], state: Reasons, path: list[cst.CSTNode], on_path: set[int]
    ) -> Reasons:
        for statement in statements:
            if id(statement) in on_path:
                return self._enter(statement, state, path, on_path)
            after = self.run(statement, state)
            if after is None:
                return NOTHING  # the node is unreachable from here
            state = after
        return state

    def _enter(self, statement: cst.CSTNode, state: Reasons, path: list[cst.CSTNode], on_path: set[int]) -> Reasons:
        def holds(child: cst.CSTNode | None) -> TypeIs[cst.CSTNode]:
            return child is not None and id(child) in on_path

        if isinstance(statement, (cst.If, cst.While)) and self._dereferenced(statement.test):
            state = NOTHING  # the test ran before the branch: None would have raised there
        if isinstance(statement, cst.If):
            if holds(statement.body):
                entry = self._assume(statement.test, True, self.refine(statement.test, True, state, on_path=True))
                return self.descend(_statements(statement.body), entry, path, on_path)
            if holds(statement.orelse):
                state = self._assume(statement.test, False, self.refine(statement.test, False, state, on_path=True))
                if isinstance(statement.orelse, cst.If):
                    return self._enter(statement.orelse, state, path, on_path)
                return self.descend(_statements(statement.orelse.body), state, path, on_path)
        elif isinstance(statement, (cst.For, cst.While)):
            if holds(statement.body):
                looped = self.run_block(_statements(statement.body), state)
                if isinstance(statement, cst.For) and self.name in assigned_names(statement.target):
                    state = looped = NOTHING
                entry = state | (looped or NOTHING)
                if isinstance(statement, cst.While):
                    entry = self.refine(statement.test, True, entry)
                return self.descend(_statements(statement.body), entry, path, on_path)
            if holds(statement.orelse):
                after = self.run(statement, state, orelse=False) or NOTHING
                return self.descend(_statements(statement.orelse.body), after, path, on_path)
        elif isinstance(statement, cst.With):
            if holds(statement.body):
                return self.descend(_statements(statement.body), self._with_items(statement, state), path, on_path)
        elif isinstance(statement, cst.Try):
            body_exit = self.run_block(_statements(statement.body), state)
            if holds(statement.body):
                return self.descend(_statements(statement.body), state, path, on_path)
            for handler in statement.handlers:
                if holds(handler):
                    return self.descend(_statements(handler.body), state | (body_exit or NOTHING), path, on_path)
            if holds(statement.orelse):
                return self.descend(_statements(statement.orelse.body), body_exit or NOTHING, path, on_path)
            if holds(statement.finalbody):
                return self.descend(_statements(statement.finalbody.body), state | (body_exit or NOTHING), path, on_path)
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                if holds(case):
                    return self.descend(_statements(case.body), state, path, on_path)
        return state  # the node is in this statement's own line (a test, an item, a call)

    # Running whole statements: the state after, or None when control never falls through.
    def run_block(self, statements: Sequence[cst.CSTNode], state: Reasons) -> Reasons | None:
        for statement in statements:
            after = self.run(statement, state)
            if after is None:
                return None
            state = after
        return state

    def run(self, statement: cst.CSTNode, state: Reasons, *, orelse: bool = True) -> Reasons | None:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, cst.Return):
                    self.at_return |= state
                    return None
                if isinstance(small, (cst.Raise, cst.Continue, cst.Break)):
                    return None
                state = self._simple(small, statement, state)
                if state and self._dereferenced(small):
                    state = NOTHING  # `model.config` ran: had it been None, it would have raised
            return state
        if isinstance(statement, (cst.If, cst.While)) and self._dereferenced(statement.test):
            state = NOTHING
        if isinstance(statement, cst.If):
            alternative = statement.orelse
            skipped = self.refine(statement.test, False, state)

            def run_body() -> Reasons | None:
                return self.run_block(_statements(statement.body), self.refine(statement.test, True, state))

            def run_orelse() -> Reasons | None:
                if isinstance(alternative, cst.If):
                    return self.run(alternative, skipped)
                if alternative is not None:
                    return self.run_block(_statements(alternative.body), skipped)
                return skipped

            outer, tags_before = self.conditions, self.assigned_under
            arm_ends: list[tuple[Reasons | None, dict[str, Conditions], Conditions]] = []

            def arm(truth: bool, run_arm: Callable[[], Reasons | None]) -> Callable[[], Reasons | None]:
                def run_in_arm() -> Reasons | None:
                    self.conditions, self.assigned_under = outer | test_atoms(statement.test, truth), dict(tags_before)
                    after = run_arm()
                    arm_ends.append((after, self.assigned_under, self.conditions))
                    return after

                return run_in_arm

            outcomes = self._branches(self.aliases, arm(True, run_body), arm(False, run_orelse))
            self.conditions, self.assigned_under = outer, _paths_held(arm_ends)
            return _join(*outcomes)
        if isinstance(statement, (cst.For, cst.While)):
            entry = state
            if isinstance(statement, cst.For) and self.name in assigned_names(statement.target):
                entry = NOTHING
            if isinstance(statement, cst.While):
                entry = self.refine(statement.test, True, entry)
            before = self.aliases
            (looped,) = self._branches(before, lambda: self.run_block(_statements(statement.body), entry))
            self.aliases &= before  # the body may not run
            after = _join(state, looped)
            if isinstance(statement, cst.While) and after is not None:
                after = self.refine(statement.test, False, after)
            if orelse and statement.orelse is not None and after is not None:
                after = self.run_block(_statements(statement.orelse.body), after)
            return after
        if isinstance(statement, cst.With):
            return self.run_block(_statements(statement.body), self._with_items(statement, state))
        if isinstance(statement, cst.Try):
            (body_exit,) = self._branches(self.aliases, lambda: self.run_block(_statements(statement.body), state))
            raised = state | (body_exit or NOTHING)
            outcomes = [self.run_block(_statements(h.body), raised) for h in statement.handlers]
            self.aliases = frozenset()  # which handler ran, and how far the body got, is unknown
            if statement.orelse is not None and body_exit is not None:
                body_exit = self.run_block(_statements(statement.orelse.body), body_exit)
            after = _join(body_exit, *outcomes)
            if statement.finalbody is not None:
                final = self.run_block(_statements(statement.finalbody.body), after or raised)
                after = None if final is None or after is None else final
            return after
        if isinstance(statement, cst.Match):
            arms = [lambda c=c: self.run_block(_statements(c.body), state) for c in statement.cases]
            return _join(state, *self._branches(self.aliases, lambda: state, *arms))  # or no case matches
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == self.name:
            return NOTHING
        return state

    def _simple(self, small: cst.BaseSmallStatement, line: cst.CSTNode, state: Reasons) -> Reasons:
        if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            self._forget_conditions_on(small)
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            self._rebind_aliases(small)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if dotted_name(target.target) == self.name:
                    return self._assigned(self.value_reasons(small.value, line))
                if self.name in assigned_names(target.target):
                    return NOTHING  # unpacked from a tuple: not a None we can see
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if dotted_name(small.target) == self.name:
                return self._assigned(self.value_reasons(small.value, line))
        elif isinstance(small, cst.Assert):
            return self.refine(small.test, True, state)
        return state

    def _rebind_aliases(self, small: cst.Assign | cst.AnnAssign) -> None:
        targets = assignment_targets(small)
        bound = {n for t in targets for n in assigned_names(t, unnamed="<subscript>")}
        bound |= {d for t in targets if (d := dotted_name(t)) is not None}
        source = dotted_name(small.value) if small.value is not None else None
        if self.name in bound:
            # `self.m = m`: m is an alias; any other value ends every alias.
            self.aliases = frozenset({source} - {self.name}) if source else frozenset()
            return
        self.aliases = self.aliases - bound
        if source is not None and source in self._names():
            self.aliases |= {d for t in targets if (d := dotted_name(t)) is not None} - {self.name}

    # ---- correlated tests ----------------------------------------------------------------

    def _assigned(self, reasons: Reasons) -> Reasons:
        """Note the tests that hold where ``reasons`` were assigned (those common to every place)."""
        for reason in reasons:
            held = self.assigned_under.get(reason)
            self.assigned_under[reason] = self.conditions if held is None else held & self.conditions
        return reasons

    def _assume(self, test: cst.BaseExpression, truth: bool, state: Reasons) -> Reasons:
        """Enter the arm of ``test`` that holds the node: a reason assigned only where the test
        went the other way cannot reach it."""
        atoms = test_atoms(test, truth)
        self.conditions |= atoms
        contradicted = {(name, not held) for name, held in atoms}
        return frozenset(r for r in state if not (self.assigned_under.get(r, frozenset()) & contradicted))

    def _forget_conditions_on(self, small: cst.Assign | cst.AnnAssign | cst.AugAssign) -> None:
        """A name bound again no longer agrees with the tests read before."""
        targets = [small.target] if isinstance(small, cst.AugAssign) else assignment_targets(small)
        bound = {n for t in targets for n in assigned_names(t, unnamed="<subscript>")}
        bound |= {d for t in targets if (d := dotted_name(t)) is not None}

        def stale(atom: tuple[str, bool]) -> bool:
            return any(atom[0] == b or atom[0].startswith(f"{b}.") for b in bound)

        self.conditions = frozenset(a for a in self.conditions if not stale(a))
        self.assigned_under = {r: frozenset(a for a in held if not stale(a)) for r, held in self.assigned_under.items()}

    def _with_items(self, statement: cst.With, state: Reasons) -> Reasons:
        for item in statement.items:
            if item.asname is not None and self.name in assigned_names(item.asname.name):
                return NOTHING
        return state

    def refine(self, test: cst.BaseExpression, truth: bool, state: Reasons, *, on_path: bool = False) -> Reasons:
        if any(none_test_outcome(test, alias, truth) == "not-none" for alias in self.aliases):
            return NOTHING
        outcome = none_test_outcome(test, self.name, truth)
        if outcome == "not-none":
            return NOTHING
        # Only the branch that holds the node is known to see None; a test the code merely
        # passes (`if model is not None: tweak(model)`) says nothing of a required parameter.
        if outcome == "none" and on_path:
            return state | {f"`{self.name}` is None in this branch"}
        return state

    def value_reasons(self, value: cst.BaseExpression, line: cst.CSTNode) -> Reasons:
        """Why the value assigned to the name may be None."""
        if is_none(value):
            return frozenset({f"`{self.name}` is assigned None on some path"})
        if isinstance(value, cst.IfExp):
            reasons = NOTHING
            for branch, truth in ((value.body, True), (value.orelse, False)):
                source = dotted_name(branch)
                if source is not None and none_test_outcome(value.test, source, truth) == "not-none":
                    continue
                reasons |= self.value_reasons(branch, line)
            return reasons
        if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
            return self.value_reasons(value.right, line)
        if isinstance(value, cst.Call):
            return frozenset({returns_none_sometimes(value)} - {None})  # type: ignore[arg-type]
        source = dotted_name(value)
        if source is not None and source != self.name and self.depth < MAX_ALIAS_DEPTH:
            return self.analysis.none_reasons(source, line, depth=self.depth + 1)
        return NOTHING


# Tests known to hold, as (dotted name, truth): ``("flag", False)`` where ``not flag`` holds.
Conditions = frozenset[tuple[str, bool]]


def test_atoms(test: cst.BaseExpression, truth: bool) -> Conditions:
    """The plain flags ``test`` settles when it is ``truth``: ``a and b`` true settles both,
    ``a or b`` false settles both, ``not a`` flips; anything else settles nothing."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test_atoms(test.expression, not truth)
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) == truth:
            return test_atoms(test.left, truth) | test_atoms(test.right, truth)
        return frozenset()
    name = dotted_name(test)
    return frozenset({(name, truth)}) if name is not None else frozenset()


def _paths_held(arm_ends: list[tuple[Reasons | None, dict[str, Conditions], Conditions]]) -> dict[str, Conditions]:
    """After a branch, the tests that held on every arm through which each reason still reaches
    here (the reason's own, plus those of the arm)."""
    held: dict[str, Conditions] = {}
    for after, assigned_under, conditions in arm_ends:
        for reason in after or ():
            here = assigned_under.get(reason, frozenset()) | conditions
            held[reason] = held[reason] & here if reason in held else here
    return held


def _join(*states: Reasons | None) -> Reasons | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    return frozenset().union(*live)


def _statements(body: cst.CSTNode) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.Module):
        return body.body
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]  # `if x: a = b` — its small statements run as one line
    return ()


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    for statement in _statements(cls.body):
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None


def nullness(model: SemanticModel) -> NullnessAnalysis:
    """The file's nullness analysis, built once however many rules ask."""
    # The context's parents: the map is built only if a question walks up from a node.
    return model.once((nullness,), lambda: NullnessAnalysis(model.context.parent, model.source.module))


def may_be_none(model: SemanticModel, name: str, at: cst.CSTNode) -> bool:
    """``name`` (or ``self.x``, through its aliases) may be None when ``at`` runs."""
    return nullness(model).is_possibly_none(name, at)
