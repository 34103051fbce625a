"""Was this value gathered across ranks? The rank flows of one file, and what its functions return.

Each scope of a file has its flow (``trllint.facts.scope_flow.RankFlow``: per-rank or global, in
statement order); ``FileRankFlows`` builds them once per file and answers what they ask of the
file's other functions: which return a gathered value, which return what unknown calls return,
what a parameter holds when every call of the file passes a gathered value, which arguments a
helper reduces in place. A function of another module of the project is read from that module's
``RETURNS_ACROSS_RANKS`` or ``REDUCES_IN_PLACE``.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from dataclasses import dataclass
from trllint.core.cst.names import COMPREHENSIONS, call_name, dotted_name
from trllint.facts.function_callers import function_callers
from trllint.facts.in_place_reductions import NAMES_AN_IN_PLACE_COLLECTIVE, REDUCES_IN_PLACE, reduced_parameters
from trllint.facts.object_syncs import SYNCS_ITS_OBJECT, object_syncing_methods
from trllint.facts.rank_lattice import LOCAL_COMPUTE_LIBRARIES, PER_RANK_LIBRARY_METHODS, SYNCING_METRIC_LIBRARIES, Rank
from trllint.facts.ranks import rank_facts
from trllint.facts.scope_flow import RankFlow
from trllint.core.source import SourceFile
from trllint.semantic.context import methods_of
from trllint.semantic.model import SemanticModel, imports_of
from trllint.semantic.project.file_view import imported_classes_view, project_view
from trllint.semantic.project.summaries import ModuleFact

if TYPE_CHECKING:
    from trllint.semantic.project.index import Definition, ProjectView


def rank_flows(model: SemanticModel) -> FileRankFlows:
    """The file's per-scope rank flows, and which of its functions return a gathered value."""
    return model.once((rank_flows,), lambda: FileRankFlows(model.source))


# A call of a function of the file: what it hands one parameter (None: the default), the function
# or module holding the call, its statement, and whether it sits in a lambda or a comprehension.
_Scope = cst.FunctionDef | cst.Module
_Argument = tuple[cst.BaseExpression | None, _Scope, cst.CSTNode | None, bool]


@dataclass(frozen=True)
class ProjectReturns:
    """What a function of another module of the project returns, as its module's
    ``RETURNS_ACROSS_RANKS`` says."""

    returns_global: bool = False
    returns_unknown: bool = False


def _returns_across_ranks(model: SemanticModel) -> dict[str, list[bool]]:
    """``f`` (a function) or ``Class.m`` (a method) -> [returns_global, returns_unknown], for the
    module's own functions and its classes' methods; one that returns neither is left out."""
    flows = rank_flows(model)
    named = [(s.name.value, s.name.value) for s in model.source.module.body if isinstance(s, cst.FunctionDef)]
    named += [
        (f"{s.name.value}.{name}", name)
        for s in model.source.module.body
        if isinstance(s, cst.ClassDef)
        for name in methods_of(s)
    ]
    answer: dict[str, list[bool]] = {}
    for key, name in named:  # in this order: a recursive call reads what the first question left
        try:
            returns = [flows.returns_global(name), flows.returns_unknown(name)]
        except RecursionError:
            returns = [False, False]
        if any(returns):
            answer[key] = returns
        else:
            answer.pop(key, None)  # a later definition of the name wins, as Python binds it
    return answer


# Which functions of a module return a value reduced across ranks, and which return what the
# linter cannot judge (see FileRankFlows.returns_global, returns_unknown). The version changes
# whenever the flows would read a module differently, so that no stored answer outlives them.
RETURNS_ACROSS_RANKS = ModuleFact("rank-flow.returns", 15, _returns_across_ranks)


def is_global(model: SemanticModel, expr: cst.CSTNode, at: cst.CSTNode) -> bool:
    """``expr``, read at ``at``, holds the same value on every rank (reduced or gathered)."""
    scope = model.context.enclosing_function(at) or model.source.module
    return rank_flows(model).flow(scope).state(expr, at) == Rank.GLOBAL


class FileRankFlows:
    """One file's flows, and which of its functions return a gathered value.

    A function imported from another module of the project, or a method that a class of this
    file inherits from a base class in another module, is read from that module's
    ``RETURNS_ACROSS_RANKS`` (``project_view(model)``): one that returns a reduced value is global, one whose result comes from
    calls the linter cannot see is unknown, any other is read like a function of this file (its
    arguments decide). Outside the project (an installed library, an unreadable module) it stays
    unknown."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.imports = imports_of(source)
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        self._class_of: dict[int, cst.ClassDef] = {}  # method -> its class
        self._index(source.module, None)
        methods = frozenset(n for n, found in self.functions.items() if any(id(f) in self._class_of for f in found))
        callers = function_callers(source.module, frozenset(self.functions), methods)
        self._relative_imports, self._self_attributes = callers.relative_imports, callers.self_attributes
        self._calls_by_name, self._handed_on = callers.calls_by_name, callers.handed_on
        self.flows: dict[int, RankFlow] = {}
        self._returns: dict[str, bool] = {}
        self._unknown: dict[str, bool] = {}
        self._called: dict[int, ProjectReturns | None] = {}
        self._bases: dict[int, list[Definition]] = {}
        self._passed: dict[tuple[int, str], Rank | None] = {}
        self._handed: dict[tuple[int, str], bool] = {}
        self._reduced: dict[int, list[int]] = {}  # a function of this file -> reduced_parameters
        self._argument_free: dict[int, RankFlow] = {}  # a function -> its flow, every argument per-rank
        self._own_syncing: dict[str, list[str]] | None = None  # object_syncing_methods of this file
        self._project_syncing: dict[tuple[str, str], bool] = {}  # (class as named here, method) -> syncs

    def _index(self, block: cst.CSTNode | None, cls: cst.ClassDef | None) -> None:
        for statement in getattr(block, "body", ()):
            if isinstance(statement, cst.FunctionDef):
                self.functions.setdefault(statement.name.value, []).append(statement)
                if cls is not None:
                    self._class_of[id(statement)] = cls
                self._index(statement.body, None)
            elif isinstance(statement, cst.ClassDef):
                self.classes.setdefault(statement.name.value, statement)
                self._index(statement.body, statement)
            elif isinstance(statement, cst.BaseCompoundStatement):
                self._index(getattr(statement, "body", None), cls)

    def release(self) -> None:
        for flow in (*self.flows.values(), *self._argument_free.values()):
            flow.release()
        self.__dict__.clear()

    def flow(self, scope: cst.FunctionDef | cst.Module) -> RankFlow:
        if id(scope) not in self.flows:
            self.flows[id(scope)] = self._new_flow(scope, arguments_per_rank=False)
        return self.flows[id(scope)]

    def _new_flow(self, scope: cst.FunctionDef | cst.Module, *, arguments_per_rank: bool) -> RankFlow:
        # Building a flow reads syntax only; its states, and the questions below, wait until read.
        cls = self._class_of.get(id(scope))
        return RankFlow(
            scope,
            self.imports,
            self.returns_global,
            lambda call: self.is_unknown_call(call, cls),
            lambda call: self.is_global_call(call, cls),
            self.passed_to,
            lambda call: self.called_summary(call, cls) is not None,
            rank_facts(SemanticModel.of(self.source)),
            lambda call: self.reduced_arguments(call, cls),
            self.returned_element,
            arguments_per_rank=arguments_per_rank,
            handed_this_ranks_data=self.handed_this_ranks_data,
            builds_syncing_metric=self.builds_syncing_metric,
            syncs_its_object=self.syncs_its_object,
        )

    def builds_syncing_metric(self, call: cst.Call, depth: int = 4) -> bool:
        """``call`` builds a metric object whose ``compute()`` syncs across ranks: a class of a
        library in ``SYNCING_METRIC_LIBRARIES`` (``MeanMetric()``), or a class of this file
        derived from one (``class MACELoss(Metric)``)."""
        name = call_name(call)
        return name is not None and self._is_syncing_metric_class(name, depth)

    def syncs_its_object(self, built: cst.Call, method: str) -> bool:
        """Calling ``method`` on what ``built`` made makes it the same on every rank: ``built``
        makes an object of a class of this file, or of another module of the project, whose
        ``method`` syncs it (``SYNCS_ITS_OBJECT``)."""
        name = call_name(built)
        if name is None:
            return False
        if name in self.classes:
            if self._own_syncing is None:
                self._own_syncing = object_syncing_methods(self.source.module, self.imports)
            return method in self._own_syncing.get(name, ())
        if not self._imported(name.partition(".")[0]):
            return False
        if (name, method) not in self._project_syncing:
            self._project_syncing[name, method] = self._project_class_syncs(name, method)
        return self._project_syncing[name, method]

    def _imported(self, head: str) -> bool:
        """``head`` is a name an import of this file binds (absolute or relative)."""
        return head in self.imports.aliases or head in self._relative_imports

    def _project_class_syncs(self, name: str, method: str) -> bool:
        view = imported_classes_view(SemanticModel.of(self.source))
        cls = view.class_named(name) if view is not None else None
        if view is None or cls is None or method not in cls.methods:
            return False
        answer = view.fact(cls, SYNCS_ITS_OBJECT, deep_if=NAMES_AN_IN_PLACE_COLLECTIVE)
        return answer is not None and method in answer.get(cls.name, ())

    def _is_syncing_metric_class(self, name: str, depth: int) -> bool:
        full = self.imports.resolve(name) or ""
        if full.partition(".")[0] in SYNCING_METRIC_LIBRARIES:
            return True
        cls = self.classes.get(name)
        if cls is None or depth == 0:
            return False
        return any(
            (base := dotted_name(arg.value)) is not None and self._is_syncing_metric_class(base, depth - 1)
            for arg in cls.bases
        )

    def returned_element(self, call: cst.Call, index: int, count: int) -> Rank | None:
        """What element ``index`` of the ``count``-tuple that ``call`` returns holds, read with
        every argument taken as this rank's data: GLOBAL when every return of the function of this
        file it lands on puts a value gathered there (TRL's ``kto_loss`` returns ``(losses,
        chosen_rewards, rejected_rewards, kl)`` with ``kl`` gathered), NO_DATA when the element
        reads no argument (``torch.as_tensor(self.running.mean)``), PER_RANK when it may carry an
        argument's data (the caller's arguments then decide). None when the call lands on no
        single function of this file or a return is not a ``count``-tuple: the whole call's
        state is then the element's."""
        name = call_name(call)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if rest and (head not in ("self", "cls") or "." in rest):
            return None
        definitions = self.functions.get(rest or head, ())
        if len(definitions) != 1 or (id(definitions[0]) in self._class_of) != bool(rest):
            return None  # defined twice, or a method called as a function (or the reverse)
        function = definitions[0]
        if id(function) not in self._argument_free:
            self._argument_free[id(function)] = self._new_flow(function, arguments_per_rank=True)
        flow = self._argument_free[id(function)]
        states: list[Rank] = []
        for small, line in flow.statements:
            if not isinstance(small, cst.Return):
                continue
            returned = small.value
            if not isinstance(returned, (cst.Tuple, cst.List)) or len(returned.elements) != count:
                return None
            element = returned.elements[index]
            if isinstance(element, cst.StarredElement):
                return None
            states.append(flow.state(element.value, line))
        return max(states) if states else None

    def passed_to(self, function: cst.FunctionDef, name: str) -> Rank | None:
        """What the calls of ``function`` in this file hand parameter ``name``, when none hands it
        this rank's data: GLOBAL when every call hands it a gathered or reduced value (GRPO's
        ``_compute_advantages(samples, gathered_rewards)``), NO_DATA when some hand it no data.
        Else None, and a parameter named like data is taken as this rank's: a call hands it what
        an unknown call made of this rank's data (``self.reward_model(**inputs)``), or in a lambda
        or a comprehension anything short of a gathered value, or ``passed_arguments`` is None."""
        key = (id(function), name)
        if key in self._passed:
            return self._passed[key]
        self._passed[key] = None  # a recursive call reads as unknown
        states: list[Rank] = []
        for value, scope, statement, in_binder in self._arguments_of(function, name) or ():
            if value is None:
                return None
            caller = self.flow(scope)
            state = caller.state(value, statement)
            if state == Rank.PER_RANK or (
                state == Rank.NO_DATA and (in_binder or caller.depends_on_rank(value, statement))
            ):
                # What an unknown call made of this rank's data (`self.reward_model(**inputs)`)
                # may be this rank's: it does not contradict the parameter's name.
                return None
            states.append(state)
        result = max(states) if states else None
        self._passed[key] = result
        return result

    def handed_this_ranks_data(self, function: cst.FunctionDef, name: str) -> bool:
        """The file shows every call of ``function`` and each hands parameter ``name`` this rank's
        data (``train(..., val_loader)`` of a loader ``fabric.setup_dataloaders`` sharded)."""
        key = (id(function), name)
        if key not in self._handed:
            self._handed[key] = False  # a recursive call reads as not shown
            arguments = self._arguments_of(function, name)
            self._handed[key] = bool(arguments) and all(
                value is not None and self.flow(scope).state(value, statement) == Rank.PER_RANK
                for value, scope, statement, _ in arguments or ()
            )
        return self._handed[key]

    def passed_arguments(self, function: cst.FunctionDef, name: str) -> list[cst.BaseExpression | None] | None:
        """What each call of ``function`` in this file hands parameter ``name`` (None: its default);
        None when the file shows none of its callers or not all (a callback, ``*args``, defined twice)."""
        arguments = self._arguments_of(function, name)
        return [value for value, _, _, _ in arguments] if arguments else None

    def _arguments_of(self, function: cst.FunctionDef, name: str) -> list[_Argument] | None:
        """``_call_sites`` with the argument each call hands parameter ``name`` (None where it
        leaves the default), recursive calls left out; None when a call passes ``*args`` up to it
        (which parameter gets what is not written)."""
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        shift = 1 if id(function) in self._class_of and positional[:1] in (["self"], ["cls"]) else 0
        found: list[_Argument] = []
        for call, scope, statement, in_binder in self._call_sites(function):
            if scope is function:
                continue  # a recursive call hands on what the parameter already holds: no evidence
            argument_node = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if argument_node is None and name in positional:
                plain = [a for a in call.args if a.keyword is None]
                index = positional.index(name) - shift
                if any(a.star for a in plain[: index + 1]):
                    return None
                argument_node = plain[index] if 0 <= index < len(plain) else None
            found.append((argument_node.value if argument_node is not None else None, scope, statement, in_binder))
        return found

    def _call_sites(self, function: cst.FunctionDef) -> list[tuple[cst.Call, _Scope, cst.CSTNode | None, bool]]:
        """(call, the scope holding it, its statement, whether it sits in a lambda or a
        comprehension) for each call of ``function`` in the file. The flow binds no lambda
        parameter or comprehension variable, so such a call's arguments may read names it
        does not know."""
        name = function.name.value
        if len(self.functions.get(name, ())) != 1 or name in self._handed_on:
            return []  # defined twice, or handed on as a value (a callback): callers the file does not show
        method = id(function) in self._class_of
        # The context's links: the function around each call, not a map of the whole file.
        parent_of = SemanticModel.of(self.source).context.parent
        sites: list[tuple[cst.Call, _Scope, cst.CSTNode | None, bool]] = []
        for call in self._calls_by_name.get(name, ()):
            receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
            # A method is called on `self` or `cls`; a function by its name alone (`os.path.exists(p)`
            # is not a call of this file's `exists`).
            on_self = receiver is not None and dotted_name(receiver) in ("self", "cls")
            if (not on_self) if method else (receiver is not None):
                continue
            statement: cst.CSTNode | None = None
            scope: cst.FunctionDef | cst.Module = self.source.module
            in_binder = False
            node = parent_of(call)
            while node is not None:
                if statement is None and isinstance(node, _BINDERS):
                    in_binder = True
                if statement is None and isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    statement = node
                if isinstance(node, cst.FunctionDef):
                    scope = node
                    break
                node = parent_of(node)
            sites.append((call, scope, statement, in_binder))
        return sites

    @cached_property
    def project(self) -> ProjectView | None:
        return project_view(SemanticModel.of(self.source))

    def project_bases(self, cls: cst.ClassDef) -> list[Definition]:
        """The base classes of ``cls`` (and of its bases in this file) that live in other modules
        of the project, nearest first."""
        if id(cls) not in self._bases:
            self._bases[id(cls)] = []
            found: list[Definition] = []
            pending, seen = [cls], set()
            while pending and self.project is not None:
                current = pending.pop(0)
                if id(current) in seen:
                    continue
                seen.add(id(current))
                for base in current.bases:
                    local = self.classes.get(dotted_name(base.value) or "")
                    if local is not None:
                        pending.append(local)
                for definition in self.project.base_classes(current):
                    if definition not in found:
                        found.append(definition)
            self._bases[id(cls)] = found
        return self._bases[id(cls)]

    def called_summary(self, call: cst.Call, cls: cst.ClassDef | None = None) -> ProjectReturns | None:
        """What the project function ``call`` lands on returns, when this file does not define
        it: a function imported from another module (``from utils.dist import reduce_mean``,
        ``from .metrics import f``, ``import utils.dist as ud``), or ``self.m()`` where ``m``
        comes from a base class of ``cls`` in another module. None when it is not one, or its
        module cannot be parsed."""
        if id(call) not in self._called:
            self._called[id(call)] = self._called_summary(call, cls)
        return self._called[id(call)]

    def _called_summary(self, call: cst.Call, cls: cst.ClassDef | None) -> ProjectReturns | None:
        name = call_name(call)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in ("self", "cls"):
            if cls is None or not rest or "." in rest or rest in self.functions or name in self._self_attributes:
                return None
            for base in self.project_bases(cls):
                if rest in base.methods and self.project is not None:
                    answer = self.project.fact(base, RETURNS_ACROSS_RANKS)
                    if answer is not None:  # the nearest base whose module can be read
                        return ProjectReturns(*answer.get(f"{base.name}.{rest}", ()))
            return None
        if (not rest and head in self.functions) or not self._imported(head):
            return None
        function = self.project.function(name) if self.project is not None else None
        if function is None or self.project is None:
            return None
        answer = self.project.fact(function, RETURNS_ACROSS_RANKS)
        return None if answer is None else ProjectReturns(*answer.get(function.name, ()))

    def reduced_arguments(self, call: cst.Call, cls: cst.ClassDef | None = None) -> list[int]:
        """The positions of the arguments ``call`` reduces in place across ranks: a function of
        this file (or a method of ``self``'s class here) read directly, one of another module of
        the project through its ``REDUCES_IN_PLACE``; [] for anything else."""
        name = call_name(call)
        if name is None or not any(arg.keyword is None and dotted_name(arg.value) for arg in call.args):
            return []  # no argument a name holds: nothing for the caller to read reduced
        head, _, rest = name.partition(".")
        if (not rest and head in self.functions) or (head in ("self", "cls") and rest in self.functions):
            definitions = self.functions[rest or head]
            if len(definitions) != 1:
                return []
            if id(definitions[0]) not in self._reduced:
                self._reduced[id(definitions[0])] = reduced_parameters(definitions[0], self.imports)
            positions = self._reduced[id(definitions[0])]
            if id(definitions[0]) in self._class_of:  # a method: its first parameter is `self`
                return [i - 1 for i in positions if i > 0] if rest else []
            return [] if rest else positions
        if head not in self._relative_imports and (
            head not in self.imports.aliases or (self.imports.resolve(name) or "").split(".")[0] in LOCAL_COMPUTE_LIBRARIES
        ):
            return []  # a builtin, a local callable, or a library's function (torch's own are matched by name)
        # Only a module that spells an in-place collective reduces an argument: no other is looked for.
        gate = NAMES_AN_IN_PLACE_COLLECTIVE
        function = self.project.function_spelling(name, gate) if self.project is not None else None
        if function is None or self.project is None:
            return []
        answer = self.project.fact(function, REDUCES_IN_PLACE, deep_if=gate)
        return list(answer.get(function.name, ())) if answer is not None else []

    def is_global_call(self, call: cst.Call, cls: cst.ClassDef | None = None) -> bool:
        """A call to a project function, not of this file, whose summary says it returns a reduced value."""
        summary = self.called_summary(call, cls)
        return summary is not None and summary.returns_global

    def is_unknown_call(self, call: cst.Call, cls: cst.ClassDef | None = None) -> bool:
        """A call whose body neither this file nor a summary of its project shows and that may
        talk to other ranks: a method inherited from a base elsewhere, or a function imported from
        a module the linter cannot read."""
        name = call_name(call)
        if name is None:
            return False
        summary = self.called_summary(call, cls)
        if summary is not None:
            return summary.returns_unknown
        head, _, rest = name.partition(".")
        if head in ("self", "cls"):
            # self.helper(...): known when this file defines it or stores a callable there (self.model).
            if rest in self.functions:
                return self.returns_unknown(rest)
            known = rest in PER_RANK_LIBRARY_METHODS or name in self._self_attributes
            return bool(rest) and "." not in rest and not known
        if not rest and head in self.functions:
            return self.returns_unknown(head)
        if head in self._relative_imports:
            return True
        full = self.imports.resolve(name)
        if head not in self.imports.aliases or full is None:
            return False  # a builtin, a local callable, a function of this file: its arguments decide
        return full.split(".")[0] not in LOCAL_COMPUTE_LIBRARIES

    def returns_unknown(self, name: str) -> bool:
        """What ``name`` returns is not decided by its arguments: every definition of it in this
        file returns only what unknown calls return (``return self._calculate_rewards(...)``,
        inherited from a base the linter cannot see), or some of its returns are reduced across
        ranks and others not (``if world_size < 2: return value`` before an all-reduce)."""
        if name not in self._unknown:
            self._unknown[name] = False  # a recursive call reads as known
            functions = self.functions.get(name, ())
            returns = [
                (small.value, self._class_of.get(id(function)))
                for function in functions
                for small, _ in self.flow(function).statements
                if isinstance(small, cst.Return)
            ]
            only_unknown = bool(returns) and all(
                isinstance(value, cst.Call) and self.is_unknown_call(value, cls) for value, cls in returns
            )
            states = [state for function in functions for state in self._return_states(function)]
            mixed = Rank.GLOBAL in states and any(state != Rank.GLOBAL for state in states)
            self._unknown[name] = only_unknown or mixed
        return self._unknown[name]

    def returns_global(self, name: str) -> bool:
        if name not in self._returns:
            self._returns[name] = False  # a recursive call reads as not global
            functions = self.functions.get(name, ())
            self._returns[name] = bool(functions) and all(
                min(self._return_states(f), default=Rank.NO_DATA) == Rank.GLOBAL for f in functions
            )
        return self._returns[name]

    def _return_states(self, function: cst.FunctionDef) -> list[Rank]:
        flow = self.flow(function)
        return [
            flow.state(small.value, line)
            for small, line in flow.statements
            if isinstance(small, cst.Return) and small.value is not None
        ]


# Expressions that bind names of their own (a lambda's parameters, a comprehension's variables),
# which a flow does not follow.
_BINDERS = (cst.Lambda, *COMPREHENSIONS)

