"""What another module of the project tells a linted file: one summary per module content.

A summary is computed from the module's own semantic model (the same analyses the rules run on
a linted file), is plain data (JSON round-trips it for the cache), and answers only what the rules
ask across modules:

- per function: whether it returns a value reduced or gathered across ranks (``returns_global``),
  whether what it returns cannot be judged (``returns_unknown``: all of it comes from calls the
  linter cannot see, or only some of its returns are reduced, as a single-process shortcut before
  an all-reduce), whether
  it may return None (``may_return_none``), which parameters it hands to ``deepspeed.initialize``
  unguarded (``forwards_to_deepspeed``);
- per class: its bases as written, its methods' summaries, the ``self`` attributes its methods
  bind to a wrapped model (with the wrapping) and all those they bind, the attribute holding its
  accelerator, and whether its methods reduce a metric buffer across ranks before logging.

Anything a summary does not say is unknown to the rules, and unknown is silent.

A question names the tokens a module must spell to hold its answer (TRL003's: a DeepSpeed sink's
call; TRL001's: a wrapping). A module that spells none is answered from its outline
(``trllint.semantic.project.outline``), its functions and classes doing nothing, without this summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import dotted_name
from trllint.core.source import SourceFile

# Bumped whenever a summary's layout or meaning changes: older cached summaries are not read.
SUMMARY_FORMAT = 4


@dataclass(frozen=True)
class FunctionSummary:
    name: str
    returns_global: bool = False
    returns_unknown: bool = False
    may_return_none: bool = False
    # (parameter, position among the positional parameters) handed to deepspeed.initialize.
    forwards_to_deepspeed: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> list:
        return [self.name, self.returns_global, self.returns_unknown, self.may_return_none,
                [list(f) for f in self.forwards_to_deepspeed]]

    @classmethod
    def from_json(cls, data: list) -> FunctionSummary:
        return cls(data[0], bool(data[1]), bool(data[2]), bool(data[3]), tuple((p, int(i)) for p, i in data[4]))


@dataclass(frozen=True)
class WrappedAttribute:
    """A ``self`` attribute that a method binds to a model that may be wrapped."""

    kind: str
    origin: str
    accelerator: str | None = None
    conditional: bool = False


@dataclass(frozen=True)
class ClassSummary:
    name: str
    bases: tuple[str, ...] = ()
    methods: dict[str, FunctionSummary] = field(default_factory=dict)
    wrapped_attributes: dict[str, WrappedAttribute] = field(default_factory=dict)
    accelerator_attribute: str | None = None
    reduces_stored_metrics: bool = False
    # Every ``self.<name>`` its methods bind, wrapped or not: a base nearer the subclass that
    # rebinds an attribute hides the wrapping of a farther one.
    bound_attributes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "bases": list(self.bases),
            "methods": [m.to_json() for m in self.methods.values()],
            "wrapped": {k: [w.kind, w.origin, w.accelerator, w.conditional] for k, w in self.wrapped_attributes.items()},
            "accelerator": self.accelerator_attribute,
            "reduces": self.reduces_stored_metrics,
            "bound": list(self.bound_attributes),
        }

    @classmethod
    def from_json(cls, data: dict) -> ClassSummary:
        methods = [FunctionSummary.from_json(m) for m in data["methods"]]
        return cls(
            data["name"],
            tuple(data["bases"]),
            {m.name: m for m in methods},
            {k: WrappedAttribute(w[0], w[1], w[2], bool(w[3])) for k, w in data["wrapped"].items()},
            data["accelerator"],
            bool(data["reduces"]),
            tuple(data["bound"]),
        )


@dataclass(frozen=True)
class ModuleSummary:
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    classes: dict[str, ClassSummary] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": SUMMARY_FORMAT,
            "functions": [f.to_json() for f in self.functions.values()],
            "classes": [c.to_json() for c in self.classes.values()],
        }

    @classmethod
    def from_json(cls, data: dict) -> ModuleSummary:
        if data.get("format") != SUMMARY_FORMAT:
            raise ValueError("a summary of another format")
        functions = [FunctionSummary.from_json(f) for f in data["functions"]]
        classes = [ClassSummary.from_json(c) for c in data["classes"]]
        return cls(
            {f.name: f for f in functions},
            {c.name: c for c in classes},
        )


def summarise_module(source: SourceFile) -> ModuleSummary:
    """The summary of one parsed module."""
    from trllint.semantic.model import SemanticModel

    model = SemanticModel.of(source)
    module = source.module
    forwards = _deepspeed_forwards(model)
    functions = {
        statement.name.value: _function_summary(model, statement, statement.name.value, forwards)
        for statement in module.body
        if isinstance(statement, cst.FunctionDef)
    }
    classes = {
        statement.name.value: _class_summary(model, statement, forwards)
        for statement in module.body
        if isinstance(statement, cst.ClassDef)
    }
    return ModuleSummary(functions, classes)


def _function_summary(model, function: cst.FunctionDef, key: str, forwards: dict) -> FunctionSummary:
    from trllint.facts.rank_flow import rank_flows

    name = function.name.value
    flows = rank_flows(model)
    try:
        returns_global = flows.returns_global(name)
        returns_unknown = flows.returns_unknown(name)
    except RecursionError:
        returns_global = returns_unknown = False
    return FunctionSummary(
        name,
        returns_global=returns_global,
        returns_unknown=returns_unknown,
        may_return_none=_may_return_none(function),
        forwards_to_deepspeed=tuple(forwards.get(key, ())),
    )


def _class_summary(model, cls: cst.ClassDef, forwards: dict) -> ClassSummary:
    from trllint.semantic.context import DEFAULT_STEP_METHODS, methods_of
    from trllint.facts.wrapping import wrapping_facts
    from trllint.rules.trl004_ungathered_metric.metric_buffers import reduces_stored_metrics

    methods = {
        name: _function_summary(model, method, f"self.{name}", forwards) for name, method in methods_of(cls).items()
    }
    wrapping = wrapping_facts(model.source, DEFAULT_STEP_METHODS)
    wrapped = {
        name: WrappedAttribute(w.kind, w.origin, w.accelerator, w.conditional)
        for name, w in wrapping.self_attributes.get(id(cls), {}).items()
    }
    accelerators = sorted(name for name, is_accelerator in model.class_facts(cls).self_attributes.items() if is_accelerator)
    return ClassSummary(
        cls.name.value,
        tuple(name for name in (dotted_name(base.value) for base in cls.bases) if name),
        methods,
        wrapped,
        "self.accelerator" if "self.accelerator" in accelerators else (accelerators[0] if accelerators else None),
        reduces_stored_metrics(cls),
        tuple(sorted(n for n in model.class_facts(cls).names_assigned if n.startswith("self.") and n.count(".") == 1)),
    )


def _deepspeed_forwards(model) -> dict[str, list[tuple[str, int]]]:
    """Function key (``f`` or ``self.m``) -> the parameters it hands to deepspeed.initialize."""
    from trllint.rules.trl003_deepspeed_initialize_none.forwarding import DEEPSPEED_SINKS, summarise_sinks
    from trllint.core.cst.parents import parent_map

    module = model.source.module
    calls: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    walk.visit(module, Calls())
    parents = parent_map(module)
    try:
        sinks = summarise_sinks(module, model.imports, list(DEEPSPEED_SINKS), parents.get, calls)
    except RecursionError:
        return {}
    forwards: dict[str, list[tuple[str, int]]] = {}
    for sink in sinks.sinks:
        if sink.local and sink.position is not None:
            forwards.setdefault(sink.name, []).append((sink.keyword, sink.position))
    return forwards


def _may_return_none(function: cst.FunctionDef) -> bool:
    """Some ``return`` of the function (not of a nested one) gives None, while another gives a value."""
    returns = _Returns(function)
    walk.visit(function, returns)
    return any(returns.none) and not all(returns.none)


class _Returns(cst.CSTVisitor):
    """Whether each ``return`` of one function (not of a nested one) gives None."""

    def __init__(self, function: cst.FunctionDef) -> None:
        super().__init__()
        self.function = function
        self.none: list[bool] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.none.append(node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None"))
