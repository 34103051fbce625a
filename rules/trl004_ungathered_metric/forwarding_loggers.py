"""A project's own logger: a class whose method hands its arguments on to a metric sink
(``self.run.log(metrics, step=step)``, ``self.writer.add_scalar(tag, value, step)``), so a call
of that method logs them.

Such a method is read from the class's body, in this file or, for a class imported from another
module of the project, through that module's ``LOGGER_FORWARDS``. A call is a sink only where its
receiver is proven an instance of the class: every assignment of the receiver's name in the file
(``logger = MetricLogger(...)``, ``self.logger = MetricLogger(...)``) makes one of it. A
parameter named ``logger`` proves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from trllint.core.cst.names import call_name, dotted_name
from trllint.semantic.context import methods_of
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.file_view import project_view
from trllint.semantic.project.summaries import ModuleFact

from trllint.core.prefilter import AnyOf, Reached

from .sink_calls import Logged, logged_arguments
from .sinks import METRIC_SINK_MARKERS

KEYWORDS = -1  # the position that stands for a method's `**metrics`: every keyword argument

# (position among the arguments after `self`, the parameter's name) of each parameter a method logs.
Forwarded = list[tuple[int, str]]


def forwarded_parameters(cls: cst.ClassDef, model: SemanticModel) -> dict[str, Forwarded]:
    """Method name -> the parameters it hands to a metric sink, itself or through another method
    of the class (``log_metrics(metrics)`` calling ``self._write(metrics)``)."""
    methods = methods_of(cls)
    found: dict[str, Forwarded] = {}
    changed = True
    while changed:  # a method that forwards to a method that forwards: to a fixed point
        changed = False
        for name, method in methods.items():
            parameters = _parameters(method)
            logged = {entry for entry in found.get(name, [])}
            for call in model.calls_in_body(method) or ():
                for value in _values_handed_on(call, found):
                    position = parameters.get(dotted_name(value) or "")
                    if position is not None:
                        logged.add((position, dotted_name(value) or ""))
            if logged != set(found.get(name, [])):
                found[name] = sorted(logged)
                changed = True
    return {name: forwarded for name, forwarded in found.items() if forwarded}


def _parameters(method: cst.FunctionDef) -> dict[str, int]:
    """Each parameter's position among the arguments a call passes after `self`; the `**` one
    stands for every keyword argument."""
    positional = [p.name.value for p in (*method.params.posonly_params, *method.params.params)]
    named = {name: index - 1 for index, name in enumerate(positional) if index > 0}
    named.update({p.name.value: len(positional) + i for i, p in enumerate(method.params.kwonly_params)})
    star = method.params.star_kwarg
    if star is not None:
        named[star.name.value] = KEYWORDS
    return named


def _values_handed_on(call: cst.Call, found: dict[str, Forwarded]) -> list[cst.BaseExpression]:
    """What ``call`` logs: a sink's logged arguments (a dict display's values one by one), or the
    arguments ``self.m(...)`` hands a method of the class already known to log them."""
    values: list[cst.BaseExpression] = []
    for value, _ in logged_arguments(call):
        if isinstance(value, cst.Dict):
            values.extend(e.value for e in value.elements)
        else:
            values.append(value)
    name = call_name(call) or ""
    if name.startswith("self.") and name.count(".") == 1 and name[5:] in found:
        for value, _ in _arguments_at(call, found[name[5:]]):
            values.extend(e.value for e in value.elements) if isinstance(value, cst.Dict) else values.append(value)
    return values


def _arguments_at(call: cst.Call, forwarded: Forwarded) -> list[Logged]:
    plain = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in call.args):
        return []  # `*args`, `**kwargs`: which argument lands where is not shown
    logged: list[Logged] = []
    for position, name in forwarded:
        if position == KEYWORDS:
            logged.extend((arg.value, False) for arg in call.args if arg.keyword is not None)
            continue
        keyword = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)
        if keyword is not None:
            logged.append((keyword.value, None))
        elif position < len(plain):
            logged.append((plain[position].value, None))
    return logged


def _module_loggers(model: SemanticModel) -> dict[str, list[list[int | str]]]:
    """``Class.method`` -> [[position, parameter], ...] for each method of the module's classes
    that hands a parameter on to a metric sink."""
    answer: dict[str, list[list[int | str]]] = {}
    for statement in model.source.module.body:
        if isinstance(statement, cst.ClassDef):
            for method, forwarded in forwarded_parameters(statement, model).items():
                answer[f"{statement.name.value}.{method}"] = [[position, name] for position, name in forwarded]
    return answer


# Which methods of a module's classes hand which parameters on to a metric sink.
LOGGER_FORWARDS = ModuleFact("trl004.logger-forwards", 1, _module_loggers)

# A method forwards only where its module calls a sink, and every sink's call spells one of these.
SPELLS_A_SINK = AnyOf(*METRIC_SINK_MARKERS)

# The prefilter's question for a file that spells no sink: a logger class (or helper) it calls
# can forward only from a module that spells one.
REACHES_A_LOGGER = Reached(SPELLS_A_SINK)


@dataclass
class FileLoggers:
    """The receivers of a file proven to be a project logger, and what their methods log."""

    receivers: dict[str, dict[str, Forwarded]] = field(default_factory=dict)

    @property
    def method_names(self) -> frozenset[str]:
        return frozenset(name for methods in self.receivers.values() for name in methods)

    def logged(self, call: cst.Call) -> list[Logged]:
        """The arguments a logger's method hands to a sink, or [] when ``call`` is no such call."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return []
        methods = self.receivers.get(dotted_name(func.value) or "")
        forwarded = methods.get(func.attr.value) if methods is not None else None
        return _arguments_at(call, forwarded) if forwarded else []


def file_loggers(model: SemanticModel) -> FileLoggers:
    """The file's receivers that every assignment binds to an instance of one logger class of
    the file or of its project (a class with a method that forwards to a sink)."""
    made: dict[str, set[str]] = {}  # receiver -> the callables its assignments call
    for assignment in model.assignments:
        targets = assignment.targets if isinstance(assignment, cst.Assign) else [assignment]
        for target in targets:
            receiver = dotted_name(target.target)
            if receiver is None or assignment.value is None:
                continue
            made.setdefault(receiver, set()).update(_constructed(assignment.value))
    local = {cls.name.value: cls for cls in model.definitions.classes}
    found = FileLoggers()
    for receiver, callees in made.items():
        if len(callees) != 1 or not next(iter(callees)):
            continue  # bound to something else too, or to what no class call shows
        methods = _logger_methods(model, next(iter(callees)), local)
        if methods:
            found.receivers[receiver] = methods
    return found


def _constructed(value: cst.BaseExpression) -> set[str]:
    """The callables an assigned value comes from: ``RunLogger(cfg)``, or either arm of
    ``RunLogger(cfg) if is_main else None`` (None makes no logger call); "" for anything else."""
    if isinstance(value, cst.IfExp):
        return _constructed(value.body) | _constructed(value.orelse)
    if isinstance(value, cst.Name) and value.value == "None":
        return set()
    return {call_name(value) or ""} if isinstance(value, cst.Call) else {""}


def _logger_methods(model: SemanticModel, callee: str, local: dict[str, cst.ClassDef]) -> dict[str, Forwarded]:
    if callee in local:
        return forwarded_parameters(local[callee], model)
    project = project_view(model)
    definition = project.class_named(callee) if project is not None else None
    if definition is None or project is None:
        return {}
    answer = project.fact(definition, LOGGER_FORWARDS, deep_if=SPELLS_A_SINK)
    if answer is None:
        return {}
    prefix = f"{definition.name}."
    return {
        key[len(prefix) :]: [(int(position), str(name)) for position, name in forwarded]
        for key, forwarded in answer.items()
        if key.startswith(prefix)
    }
