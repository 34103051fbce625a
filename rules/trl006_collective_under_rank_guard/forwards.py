"""A function that runs a forward of the model it is handed (``compute_logprobs(engine, batch)``).

Under ZeRO-3 a DeepSpeed engine's forward gathers each layer's parameters from every rank, so a
call of such a function enters a collective when the caller hands it an engine
``deepspeed.initialize`` returned. The function is read as the rule reads one (its guards, the
tests of its parameters), and through the functions of its module it hands the model to. Asked
only of a call that hands an engine: of a function of the linted file, or of another module of
the project (``trl006.forwards-a-parameter``, which no token gates: a forward spells none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst.names import argument, dotted_name
from trllint.semantic.project.summaries import ModuleAnswer

from .collectives import ENGINE_FORWARD_BACKENDS, Collective, call_label, engines_from_initialize, forwarded
from .guard_syntax import under_parameter_test

if TYPE_CHECKING:
    from trllint.semantic.context import NodeContext
    from trllint.semantic.model import SemanticModel

class FunctionReader(Protocol):
    """What the rule's readings of a function ask of it (CollectiveUnderRankGuard)."""

    @property
    def context(self) -> NodeContext: ...
    @property
    def model(self) -> SemanticModel: ...
    def bind(self, model: SemanticModel, *, project: bool) -> None: ...
    def calls_run_by(self, function: cst.FunctionDef) -> list[cst.Call]: ...
    def own_function(self, call: cst.Call) -> cst.FunctionDef | None: ...
    def guard_of(self, collective: Collective) -> Any: ...
    def get_metadata(self, key: Any, node: cst.CSTNode) -> Any: ...
    def release(self) -> None: ...


def forwarded_parameter(rule: FunctionReader, function: cst.FunctionDef) -> tuple[int, str, cst.Call] | None:
    """The parameter of ``function`` that every call of it runs a forward of (``model(batch)``,
    ``model.generate(...)``, with no rank guard of its own and no test of a parameter around it),
    itself or through a function of the same file it is handed to: its position, its name and
    the forward's call. Read once per function and file."""
    known: dict[int, tuple[int, str, cst.Call] | None] = rule.model.once((forwarded_parameter,), dict)
    key = id(function)
    if key not in known:
        known[key] = None  # recursion reads as no forward
        known[key] = _forwarded_parameter(rule, function)
    return known[key]


def _forwarded_parameter(rule: FunctionReader, function: cst.FunctionDef) -> tuple[int, str, cst.Call] | None:
    parameters = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
    for call in rule.calls_run_by(function):
        name = forwarded(call)
        found = (call, name) if name in parameters and name not in ("self", "cls") else None
        callee = rule.own_function(call) if found is None else None
        inner = forwarded_parameter(rule, callee) if callee is not None else None
        handed = _handed(call, (inner[0], inner[1])) if inner is not None else None
        if inner is not None and handed is not None and isinstance(handed.value, cst.Name):
            found = (inner[2], handed.value.value) if handed.value.value in parameters else None
        if found is None or under_parameter_test(call, function, rule.context, enters=lambda other: False):
            continue
        if rule.guard_of(Collective(call, call_label(call), "engine_forward", "never")) is None:
            return parameters.index(found[1]), found[1], found[0]
    return None


def per_function(
    rule: FunctionReader, model: SemanticModel, entry: Callable[[cst.FunctionDef], dict[str, Any] | None]
) -> ModuleAnswer:
    """``entry`` of each top-level function of the module, those with one (a later definition of
    a name wins, as Python binds it), ``rule`` bound to the module with no question to the
    project, so that it reads one level only."""
    rule.bind(model, project=False)
    answer: ModuleAnswer = {}
    try:
        for statement in model.source.module.body:
            if isinstance(statement, cst.FunctionDef):
                answer[statement.name.value] = entry(statement)
    finally:
        rule.release()
    return {name: found for name, found in answer.items() if found is not None}


def forwarded_parameters(rule: FunctionReader, model: SemanticModel) -> ModuleAnswer:
    """``f`` -> {position, parameter, line} for each top-level function of the module that runs a
    forward of a parameter (``forwarded_parameter``)."""

    def entry(function: cst.FunctionDef) -> dict[str, Any] | None:
        forward = forwarded_parameter(rule, function)
        if forward is None:
            return None
        position, parameter, call = forward
        line = rule.get_metadata(PositionProvider, call).start.line
        return {"position": position, "parameter": parameter, "line": line}

    return per_function(rule, model, entry)


def hands_an_engine(call: cst.Call, context: NodeContext) -> bool:
    """``call`` passes a DeepSpeed engine ``deepspeed.initialize`` returned (the cheap question first)."""
    engines = engines_from_initialize(context)
    return bool(engines) and any(dotted_name(arg.value) in engines for arg in call.args)


def handed_engine(call: cst.Call, forwards: tuple[int, str], context: NodeContext) -> str | None:
    """The DeepSpeed engine ``call`` hands the function at the parameter it runs a forward of
    (``forwards``: its position and name), as the code names it; None for anything else."""
    handed = _handed(call, forwards)
    engine = dotted_name(handed.value) if handed is not None else None
    return engine if engine is not None and engine in engines_from_initialize(context) else None


def engine_forward_call(rule: FunctionReader, call: cst.Call, function: cst.FunctionDef) -> Collective | None:
    """``call`` of ``function``, a function of the linted file, as a collective: when it hands
    the function an engine whose forward the function runs."""
    if not hands_an_engine(call, rule.context):
        return None
    forward = forwarded_parameter(rule, function)
    engine = handed_engine(call, (forward[0], forward[1]), rule.context) if forward is not None else None
    if engine is None:
        return None
    label = f"{call_label(call)}() (it runs a forward of {engine}, a DeepSpeed engine)"
    return Collective(call, label, f"call:{function.name.value}", "never", ENGINE_FORWARD_BACKENDS)


def _handed(call: cst.Call, forwards: tuple[int, str]) -> cst.Arg | None:
    """The argument ``call`` passes for the parameter at ``forwards`` (position, name); a call of
    ``self.method(...)`` binds the method's first parameter itself."""
    position, name = forwards
    func = call.func
    bound = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
    return argument(call, name, position - 1 if bound else position)
