"""Which functions of a file pass one of their parameters on to a sink, followed transitively.

A sink is a call that must not receive a certain value (``deepspeed.initialize(model=None)``).
A function defined in the same file that hands its own parameter to a sink, with no guard on the
way, is a sink too, for that parameter; so is a function that hands it to such a function, and
so on. The summary is computed once per file and settings, however many calls ask.

A function defined in the file always wins over a built-in sink of the same name: a local
``prepare_deepspeed`` that returns early on None is not a sink.

Functions of other modules of the project count too (``project_sinks``): a helper this file
imports (``from .utils import init_engine``, ``utils.init_engine``) or a method the file's class
inherits from a base class in another module (``self.init_engine``) is a sink for the
parameters its module's ``FORWARDS_TO_DEEPSPEED`` says it forwards. Such a name is then judged by
that alone,
like a function of the file: a project's own ``prepare_deepspeed`` that guards None is no sink.
A name the project cannot answer for (an installed library, a missing module) keeps the
built-in matching.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from dataclasses import dataclass
from trllint.facts.markers import DEEPSPEED_INITIALIZE
from trllint.core.cst.names import ImportMap, argument, call_name, dotted_name, matches, parameter_names
from trllint.facts.nullness import nullness
from trllint.core.prefilter import AnyOf, Reached
from trllint.semantic.project.summaries import ModuleFact

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel
    from trllint.semantic.project.index import ProjectView

_ASSUME_NONE = frozenset({"assumed None"})


@dataclass(frozen=True)
class Sink:
    """Calls named ``name`` must not get None as argument ``keyword`` (or at ``position``)."""

    name: str
    keyword: str
    position: int | None
    # The functions the value passes through before the real sink, for messages.
    via: tuple[str, ...] = ()
    local: bool = False  # defined in this file: matched by exact name, not by suffix

    def accepts(self, call: cst.Call, imports: ImportMap) -> bool:
        name = call_name(call)
        if self.local:
            return name == self.name
        return matches(imports.resolve(name), self.name)


DEEPSPEED_SINKS = (
    # Its first positional parameter is `args`: the model is only ever passed as `model=`.
    Sink("deepspeed.initialize", "model", None),
    # TRL's helper (trl.models.utils, and the trainers' older `_prepare_deepspeed` copies).
    Sink("prepare_deepspeed", "model", 0, ("prepare_deepspeed()",)),
    Sink("_prepare_deepspeed", "model", 0, ("_prepare_deepspeed()",)),
)

# What a module must spell to call one of DEEPSPEED_SINKS itself: without it, FORWARDS_TO_DEEPSPEED
# (one module deep) finds no function of it forwarding, so the module is not parsed for TRL003. A
# sink is matched by its whole last name, so `prepare_deepspeed_plugin` (accelerate's, kohya's) is
# none: the name must end there.
CALLS_A_SINK = AnyOf(re.compile(r"prepare_deepspeed(?!\w)"), DEEPSPEED_INITIALIZE)


class FileSinks:
    """The sinks a file's calls may reach, indexed by their last name: matching a call costs
    the same however many of the file's functions forward to a sink."""

    def __init__(self, sinks: Iterable[Sink], local_names: frozenset[str] = frozenset()) -> None:
        self.sinks: list[Sink] = []
        self._by_last: dict[str, list[Sink]] = {}
        self._order: dict[Sink, int] = {}
        # How the file's own functions are called: such a call is judged by their summary alone.
        self.local_names = local_names
        # id(call) -> its name and the last names a sink must have to match it: a call is matched
        # again on each round of the file's summary, and its name does not change.
        self._names: dict[int, tuple[str | None, frozenset[str]]] = {}
        for sink in sinks:
            self.add(sink)

    def add(self, sink: Sink) -> None:
        self._order[sink] = len(self.sinks)
        self.sinks.append(sink)
        self._by_last.setdefault(sink.name.rsplit(".", 1)[-1], []).append(sink)

    def matching(self, call: cst.Call, imports: ImportMap) -> list[Sink]:
        named = self._names.get(id(call))
        if named is None:
            name = call_name(call)
            # A cheap test first: a sink's last name is the call's (or its import's) last name.
            lasts = frozenset() if name is None else frozenset(
                {name.rsplit(".", 1)[-1], (imports.resolve(name) or name).rsplit(".", 1)[-1]}
            )
            named = self._names[id(call)] = (name, lasts)
        name, lasts = named
        if name is None or not any(last in self._by_last for last in lasts):
            return []
        # In the order the sinks were found (a set of two names has no order of its own).
        candidates = sorted({id(s): s for last in lasts for s in self._by_last.get(last, ())}.values(), key=self._order.__getitem__)
        if name in self.local_names:
            return [s for s in candidates if s.local and s.accepts(call, imports)]
        return [s for s in candidates if not s.local and s.accepts(call, imports)]


def local_functions(module: cst.Module) -> dict[str, tuple[cst.FunctionDef, bool]]:
    """How each function of the file is called (``f`` or ``self.f``), and whether it takes self."""
    functions: dict[str, tuple[cst.FunctionDef, bool]] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            functions.setdefault(statement.name.value, (statement, False))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    static = any(dotted_name(d.decorator) == "staticmethod" for d in member.decorators)
                    functions.setdefault(f"self.{member.name.value}", (member, not static))
    return functions


def _deepspeed_forwards(model: SemanticModel) -> dict[str, list[list[str | int]]]:
    """Function key (``f`` or ``self.m``) -> the [parameter, position] pairs it hands to
    ``deepspeed.initialize`` (or TRL's ``prepare_deepspeed``) unguarded."""
    try:
        sinks = summarise_sinks(model, list(DEEPSPEED_SINKS))
    except RecursionError:
        return {}
    forwards: dict[str, list[list[str | int]]] = {}
    for sink in sinks.sinks:
        if sink.local and sink.position is not None:
            forwards.setdefault(sink.name, []).append([sink.keyword, sink.position])
    return forwards


# Which of a module's functions (``f``) and methods (``self.m``) hand which parameter to a
# DeepSpeed sink: the module is asked it when a linted file calls them.
FORWARDS_TO_DEEPSPEED = ModuleFact(
    "trl003.forwards-to-deepspeed",
    1,
    _deepspeed_forwards,
    # A function forwards only where the module calls a sink (or imports one to call).
    calls=frozenset(sink.name.rsplit(".", 1)[-1] for sink in DEEPSPEED_SINKS),
)


# The prefilter's question for a file that calls no sink by name: a helper it calls (or a method
# its classes inherit) can forward only from a module that spells a sink's call.
REACHES_A_SINK = Reached(CALLS_A_SINK)


def summarise_sinks(model: SemanticModel, base: list[Sink], project: ProjectView | None = None) -> FileSinks:
    """``base`` plus every same-file function that forwards a parameter to a sink unguarded.

    The file's calls, and the function each sits in, come from the model's one walk. With
    ``project``, the project's helpers the file calls join ``base`` (``project_sinks``).
    """
    imports = model.imports
    functions = local_functions(model.source.module)
    judged = frozenset(functions)
    if project is not None:
        extra, from_project = project_sinks(model, project, judged, _SinkNames(base, imports))
        base = [*extra, *base]
        judged |= from_project
    calls_in: dict[int, list[cst.Call]] = {}
    for call in model.calls:
        function = model.context.enclosing_function(call)
        if function is not None:
            calls_in.setdefault(id(function), []).append(call)
    calls = {key: calls_in.get(id(function), []) for key, (function, _) in functions.items()}
    analysis = nullness(model)
    sinks = FileSinks(list(base), judged)
    known: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for key, (function, takes_self) in functions.items():
            params = parameter_names(function.params, stars=True)
            positional = params[1:] if takes_self else params
            for call in calls[key]:
                for sink in sinks.matching(call, imports):
                    arg = argument(call, sink.keyword, sink.position)
                    passed = dotted_name(arg.value) if arg is not None else None
                    if passed not in positional or (key, passed) in known:
                        continue
                    if not analysis.none_reasons(passed, call, assume_at_entry=_ASSUME_NONE):
                        continue  # guarded (or reassigned) on every path to the sink
                    known.add((key, passed))
                    short = key.rsplit(".", 1)[-1]
                    via = (f"{short}()", *sink.via)
                    sinks.add(Sink(key, passed, positional.index(passed), via, local=True))
                    changed = True
    return sinks


class _SinkNames:
    """Whether a call's name may match one of the file's base sinks by its last name (its own or
    its import's), as ``FileSinks.matching`` matches them."""

    def __init__(self, base: Iterable[Sink], imports: ImportMap) -> None:
        self.lasts = frozenset(sink.name.rsplit(".", 1)[-1] for sink in base)
        self.imports = imports

    def may_match(self, name: str) -> bool:
        full = self.imports.resolve(name) or name
        return name.rsplit(".", 1)[-1] in self.lasts or full.rsplit(".", 1)[-1] in self.lasts


def project_sinks(
    model: SemanticModel, project: ProjectView, defined_here: frozenset[str], sink_names: _SinkNames
) -> tuple[list[Sink], frozenset[str]]:
    """The sinks among the project's functions that the file calls, and every called name the
    project answers for (judged by that alone). A name defined in the file is its own.

    Being judged matters only to a name that may match a base sink (``sink_names``): another
    name's answer counts only when it makes the function a sink, which only a module that spells
    a sink's call can say, so only such a module is looked for (``function_spelling``)."""
    sinks: list[Sink] = []
    judged: set[str] = set()
    asked: set[str] = set()
    for call in model.calls:
        name = call_name(call)
        if name is None or name in asked or name in defined_here or name.startswith("self."):
            continue
        asked.add(name)
        if name.partition(".")[0] not in project.imports:
            continue
        if sink_names.may_match(name):
            function = project.function(name)
        else:
            function = project.function_spelling(name, CALLS_A_SINK)
        answer = None if function is None else project.fact(function, FORWARDS_TO_DEEPSPEED, deep_if=CALLS_A_SINK)
        if function is not None and answer is not None:
            judged.add(name)
            sinks.extend(_sinks_of(name, _forwarded(answer, function.name)))
    for name, forwarded in _inherited_methods(model, project, defined_here).items():
        judged.add(name)
        sinks.extend(_sinks_of(name, forwarded))
    return sinks, frozenset(judged)


def _forwarded(answer: dict, key: str) -> tuple[tuple[str, int], ...]:
    """The (parameter, position) pairs ``FORWARDS_TO_DEEPSPEED`` says the function ``key`` forwards."""
    return tuple((param, int(position)) for param, position in answer.get(key, ()))


def _sinks_of(name: str, forwarded: tuple[tuple[str, int], ...]) -> list[Sink]:
    via = (f"{name.rsplit('.', 1)[-1]}()",)
    return [Sink(name, param, position, via, local=True) for param, position in forwarded]


def _inherited_methods(
    model: SemanticModel, project: ProjectView, defined_here: frozenset[str]
) -> dict[str, tuple[tuple[str, int], ...]]:
    """``self.m`` -> what ``m`` forwards as the file's classes inherit it from base classes in
    other modules (the nearest base that defines it). ``self.m`` is matched by name whichever
    class the call sits in, so a name is known only when every class that calls it inherits
    a method that forwards the same; a call outside a class, or a class that does not inherit
    ``m`` from the project, leaves it unknown."""
    callers: dict[str, set[int]] = {}
    classes: dict[int, cst.ClassDef | None] = {}
    for call in model.calls:
        name = call_name(call)
        if name is None or not name.startswith("self.") or name.count(".") != 1 or name in defined_here:
            continue
        cls = model.outermost_class_holding(call)
        classes[id(cls)] = cls
        callers.setdefault(name, set()).add(id(cls))
    inherited: dict[int, dict[str, tuple[tuple[str, int], ...]]] = {}
    for key, cls in classes.items():
        methods: dict[str, tuple[tuple[str, int], ...]] = {}
        for base in project.base_classes(cls) if cls is not None and cls.bases else ():
            answer = project.fact(base, FORWARDS_TO_DEEPSPEED, deep_if=CALLS_A_SINK)
            if answer is None:
                continue  # a module that cannot be parsed says nothing
            for method in base.methods:
                methods.setdefault(f"self.{method}", _forwarded(answer, f"self.{method}"))  # nearest base first
        inherited[key] = methods
    known: dict[str, tuple[tuple[str, int], ...]] = {}
    for name, owners in callers.items():
        found = {inherited[owner].get(name) for owner in owners}
        if len(found) == 1 and (forwarded := found.pop()) is not None:
            known[name] = forwarded
    return known
