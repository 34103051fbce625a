"""TRL004 ungathered-metric: a per-rank tensor logged as a metric without a gather.

Every rank computes ``chosen_rewards.mean()`` over its own slice of the batch; the Trainer logs
from rank 0 only, so the curve describes one rank's data (DPO/CPO/ORPO/KTO in TRL did this until
they gathered first). The fix gathers the per-rank tensor before it is reduced.
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from trllint.core.findings import ReasonKind

from trllint.facts.branches import rank_divergence
from trllint.semantic.context import CONTEXT_METADATA, is_trainer_class, methods_of
from trllint.facts.launch.backends import MULTI_PROCESS
from trllint.facts.launch.model import launch_of
from trllint.facts.accelerators import accelerator_in_scope, accelerator_may_be_none
from trllint.facts.distributed import DISTRIBUTED_MARKERS, runs_distributed
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank
from trllint.facts.scope_flow import RankFlow
from trllint.core.cst.names import argument, call_name, dotted_name, is_true, last_attribute
from trllint.rule.base import LINE_LENGTH_SETTING, AllOf, AnyOf, Calls, Defines, Edit, FindingKind, Reads, Rule, Setting, Token

from .devices import made_on_cpu
from .gather_fix import gather_expression, proposed_gather, wrapped_to_line_length
from .gather_sites import GatherSite, gather_sites
from trllint.rules.trl004_ungathered_metric.metric_buffers import stored_metrics_reduced
from trllint.semantic.model import SemanticModel
from .sinks import (
    CALLBACK_SINK_METHOD,
    DICT_SINK_METHODS,
    METRIC_BUFFERS,
    SCALAR_SINK_METHODS,
    SCALARS_SINK_METHOD,
    SELF_SINKS,
    SINK_METHODS,
    TRAINER_METRIC_HELPERS,
    logs_with_log,
)
from .metric_syntax import (
    attributes_read_by_sinks,
    buffer_root,
    builds_dict,
    dict_values,
    dotted_names_in,
    elements,
    is_media,
    loose_name,
    statement_calls,
    written_as_buffers,
)


class Unsafe(ReasonKind):
    """Why the gather fix is not proven to work on every process group (the fact it misses)."""

    ACCELERATOR_MAY_BE_NONE = "{missing}: the fixed code would gather through None where the original ran"
    MADE_ON_CPU = (
        "the value is made on the CPU by {factory}(...) with no device, and NCCL gathers GPU tensors only: "
        "make it on the accelerator's device first"
    )


# Every value this rule checks reaches one of these: a sink call (`.log`, `log_metrics`,
# `add_scalar`...), a metric buffer (`self._metrics`) or a helper whose dict the trainer logs
# (`get_batch_loss_metrics`). A file with none of them is not parsed for this rule.
METRIC_SINK_MARKERS: tuple[Token, ...] = (
    "_metrics", "add_scalar", "log_dict", "log_metric", "on_log", re.compile(r"\.\s*log\s*\(")
)

# No fix may name an accelerator the code does not provably bind there (AttributeError or
# UnboundLocalError at run time): the message says what to gather with instead.
NO_ACCELERATOR = (
    "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice; no accelerator "
    "is bound here on every path: gather it with the run's Accelerator (gather_for_metrics) or "
    "all-reduce it on every rank before logging"
)

Logged = tuple[cst.BaseExpression, bool | None]  # (argument, holds a dict of metrics: yes/no/unknown)
LoggedValue = tuple[cst.BaseExpression, cst.CSTNode, bool]  # (value, its statement, stored for log())


class UngatheredMetric(Rule):
    code = "TRL004"
    name = "ungathered-metric"
    message = (
        "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice; "
        "reduce it on each rank and gather the ranks' values first: accelerator.gather(x.mean()).mean()"
    )
    fixable = "sometimes"
    kinds = {
        "per-rank-value": FindingKind("a value computed from this rank's data, under a launch that shows several processes"),
        "per-rank-value-launch-unknown": FindingKind(
            "a value computed from this rank's data, where no launch shows several processes", unproven=True
        ),
    }
    # Last, the names: a sink called (`x.log(...)`, `add_scalar(...)`...), a metric buffer read, or
    # a trainer's metrics helper defined.
    prefilter = AllOf(
        AnyOf(*DISTRIBUTED_MARKERS),
        AnyOf(*METRIC_SINK_MARKERS, setting="metric-sinks"),  # a configured sink is a sink marker too
        AnyOf(
            Calls(*SINK_METHODS),
            Reads(*{buffer.rsplit(".", 1)[-1] for buffer in METRIC_BUFFERS}),
            Defines(*TRAINER_METRIC_HELPERS),
            Calls("log"),  # whether a `.log` call's receiver is a tracker's is the rule's to say
            setting="metric-sinks",
        ),
    )
    settings_schema = {
        "line-length": LINE_LENGTH_SETTING,
        "metric-sinks": Setting(
            list,
            (),
            "extra callables whose arguments are logged as metrics (`self.report_metrics`, `log_scalars`)",
            item_kind=str,
        ),
        "report-rank0-loss": Setting(
            bool,
            False,
            "also report the training loss a custom loop logs from rank 0 as is (`loss.item()`)",
        ),
    }
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def __init__(self, source, settings=None) -> None:
        super().__init__(source, settings)
        self._reported: set[int] = set()
        self._buffers: frozenset[str] = frozenset(METRIC_BUFFERS)
        self._stored_reduced: dict[int, bool] = {}

    def check_module(self, model: SemanticModel) -> None:
        if not runs_distributed(self.source):
            return
        definitions = model.definitions
        self._functions = definitions.functions
        self._classes = definitions.classes_by_name()
        self._class_of_method = definitions.class_of_method
        self._trainer_methods = {
            id(method) for cls in definitions.classes if is_trainer_class(cls) for method in methods_of(cls).values()
        }
        # A function's flow is built only where a value can reach a sink from it (see
        # ``_words_that_log``): first the functions that call a sink, then those that may write a
        # buffer the sinks read, or return to a helper's caller.
        scopes = (model.source.module, *self._functions)
        built: dict[int, RankFlow | None] = {}

        def flows_of(wanted: Callable[[cst.CSTNode], bool]) -> list[RankFlow]:
            for scope in scopes:
                if id(scope) not in built and wanted(scope):
                    try:
                        built[id(scope)] = rank_flows(model).flow(scope)
                    except RecursionError:  # an expression nested too deep to follow: say nothing about it
                        built[id(scope)] = None
            return [flow for scope in scopes if (flow := built.get(id(scope))) is not None]

        def spells(scope: cst.CSTNode, words: frozenset[str]) -> bool:
            return scope is model.source.module or not words.isdisjoint(model.identifiers(scope))

        flows = flows_of(lambda scope: spells(scope, self._words_that_log))
        helpers = self._helpers_reaching_sinks(flows)
        # Only a function that calls a sink hands it an attribute, so these flows name them all;
        # only a function that spells one can write it.
        read_by_sinks = attributes_read_by_sinks([flow.statements for flow in flows], self._logged_arguments)
        writes = frozenset(name.rsplit(".", 1)[-1] for name in (*METRIC_BUFFERS, *read_by_sinks))
        flows = flows_of(
            lambda scope: spells(scope, writes) or (isinstance(scope, cst.FunctionDef) and scope.name.value in helpers)
        )
        # `self.stats` when a sink logs what it holds and some method writes it like a buffer.
        self._buffers = frozenset(METRIC_BUFFERS) | written_as_buffers(read_by_sinks, [flow.statements for flow in flows])
        for flow in flows:
            cls = self._class_of_method.get(id(flow.scope))
            for value, line, stored in self._logged_values(flow, helpers):
                if not (stored and cls is not None and self._stored_are_reduced(cls)):
                    self._check(value, line, flow)

    def _stored_are_reduced(self, cls: cst.ClassDef) -> bool:
        """Stored values are reduced across ranks by the class's own methods before they are
        logged. Asked once per class, and only for a class that stores a value: the question reads
        every method of the class (or a base's summary), so asking it per method would be quadratic."""
        if id(cls) not in self._stored_reduced:
            self._stored_reduced[id(cls)] = stored_metrics_reduced(
                self.source, cls, self._classes, self._buffers, lambda call: bool(self._logged_arguments(call))
            )
        return self._stored_reduced[id(cls)]

    # ---- where metrics go -------------------------------------------------------------------

    def _logged_arguments(self, call: cst.Call) -> list[Logged]:
        """The arguments of ``call`` that a metric sink logs, or [] when it is no sink."""
        name = loose_name(call.func)
        parts = name.split(".")
        receiver, method = (parts[-2] if len(parts) > 1 else ""), parts[-1]
        first, second = argument(call, "", 0), argument(call, "", 1)
        if name == "self.log" and first is not None and isinstance(first.value, cst.BaseString):
            synced = argument(call, "sync_dist")
            return [] if (synced is not None and is_true(synced.value)) or second is None else [(second.value, False)]
        if name in SELF_SINKS or method in DICT_SINK_METHODS or logs_with_log(name):
            return [(first.value, True)] if first is not None else []
        if method == CALLBACK_SINK_METHOD and "callback_handler" in receiver:
            # Trainer.log hands its logs to the callbacks this way; a subclass may call it directly.
            logs = argument(call, "logs", 3)
            return [(logs.value, True)] if logs is not None else []
        if method in SCALAR_SINK_METHODS:
            value = argument(call, "value" if method == "log_metric" else "scalar_value", 1)
            return [(value.value, False)] if value is not None else []
        if method == SCALARS_SINK_METHOD:
            return [(second.value, True)] if second is not None else []
        for sink in self.settings["metric-sinks"]:
            if name == sink or name.endswith("." + sink):
                return [(arg.value, None) for arg in call.args]
        return []

    @property
    def _words_that_log(self) -> frozenset[str]:
        """A word every call ``_logged_arguments`` reads as a sink spells: its method's name (a
        configured sink's last part too). A function that spells none hands no value to a sink
        itself; it matters only where it writes a buffer or returns to a helper's caller."""
        configured = (sink.rsplit(".", 1)[-1] for sink in self.settings["metric-sinks"])
        return frozenset({*SINK_METHODS, "log", *configured})

    def _helpers_reaching_sinks(self, flows: list[RankFlow]) -> dict[str, bool]:
        """Functions whose returned dict is handed to a sink (``loss, metrics = self.f(...)``), each
        with whether the dict is only stored (``store_metrics``), not logged at once."""
        helpers = {
            f.name.value: True
            for f in self._functions
            if f.name.value in TRAINER_METRIC_HELPERS and id(f) in self._trainer_methods
        }
        for flow in flows:
            for small, line in flow.statements:
                for call in statement_calls(small):
                    for arg, holds_dict in self._logged_arguments(call):
                        if holds_dict is False:
                            continue
                        if isinstance(arg, cst.Name):
                            binding = flow.binding(arg.value, line)
                            arg = binding.value if binding is not None else arg
                        if isinstance(arg, cst.Call) and call_name(arg):
                            helper = last_attribute(call_name(arg)) or ""
                            stored = loose_name(call.func) == "self.store_metrics"
                            helpers[helper] = helpers.get(helper, True) and stored
        return helpers

    def _logged_values(self, flow: RankFlow, helpers: dict[str, bool]) -> list[LoggedValue]:
        """What ``flow`` logs, each with whether it is stored for the trainer's ``log()`` to log
        (a metric buffer, ``store_metrics``, a dict returned to the trainer) rather than logged now."""
        values: list[LoggedValue] = []
        dicts: dict[str, bool] = {}  # metric dict name -> stored (False once any use logs it now)
        returns_to_sink = isinstance(flow.scope, cst.FunctionDef) and flow.scope.name.value in helpers
        for small, line in flow.statements:
            for call in statement_calls(small):
                stored = loose_name(call.func) == "self.store_metrics"
                for arg, holds_dict in self._logged_arguments(call):
                    name = dotted_name(arg)
                    if holds_dict is None and name is not None:
                        binding = flow.binding(name, line)
                        bound = binding.value if binding is not None else None
                        holds_dict = bound is None or builds_dict(bound) or isinstance(bound, cst.Call)
                    if isinstance(arg, cst.Dict):
                        values.extend((v, line, stored) for v in dict_values(arg, dicts, stored))
                    elif holds_dict and name is not None:
                        if self._reduced_here(flow, name, line):
                            continue  # `info = accelerator.reduce(info)`: what it held before is reduced
                        dicts[name] = dicts.get(name, True) and stored
                    elif not holds_dict:
                        values.append((arg, line, stored))
                if buffer_root(call.func, self._buffers) and last_attribute(loose_name(call.func)) in ("append", "extend"):
                    values.extend((v, line, True) for v in elements(call.args[0].value if call.args else None))
            if isinstance(small, cst.Assign) and any(buffer_root(t.target, self._buffers) for t in small.targets):
                values.extend((v, line, True) for v in elements(small.value))
            if returns_to_sink and isinstance(small, cst.Return) and small.value is not None:
                # The trainer stores a returned metrics dict (compute_loss -> store_metrics).
                stored = helpers[flow.scope.name.value]
                returned = small.value.elements if isinstance(small.value, cst.Tuple) else [small.value]
                for element in returned:
                    element = getattr(element, "value", element)
                    if isinstance(element, cst.Dict):
                        values.extend((v, line, stored) for v in dict_values(element, dicts, stored))
                    elif isinstance(element, cst.Name):
                        dicts[element.value] = dicts.get(element.value, True) and stored
        return values + self._dict_contents(flow, dicts)

    @staticmethod
    def _reduced_here(flow: RankFlow, name: str, line: cst.CSTNode) -> bool:
        """The dict the sink logs was rebound to a reduction of the ranks' dicts before it
        (``info = self.accelerator.reduce(info, reduction="mean")``): every entry put in it
        earlier is reduced with it."""
        binding = flow.binding(name, line)
        value = binding.value if binding is not None else None
        return isinstance(value, cst.Call) and binding is not None and binding.state == Rank.GLOBAL and any(
            dotted_name(arg.value) == name for arg in value.args
        )

    def _dict_contents(self, flow: RankFlow, dicts: dict[str, bool]) -> list[LoggedValue]:
        """What goes into the metric dicts: ``metrics[key] = value``, ``metrics.update(...)``."""
        values: list[LoggedValue] = []
        for small, line in flow.statements:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Subscript) and dotted_name(target.target.value) in dicts:
                        values.append((small.value, line, dicts[dotted_name(target.target.value)]))
                    elif dotted_name(target.target) in dicts and isinstance(small.value, cst.Dict):
                        stored = dicts[dotted_name(target.target)]
                        values.extend((v, line, stored) for v in dict_values(small.value, dicts, stored))
            for call in statement_calls(small):
                if not isinstance(call.func, cst.Attribute):
                    continue
                receiver = call.func.value
                if call.func.attr.value == "update" and dotted_name(receiver) in dicts:
                    stored = dicts[dotted_name(receiver)]
                    for arg in call.args:
                        logged = [arg.value] if arg.keyword is not None else dict_values(arg.value, dicts, stored)
                        values.extend((v, line, stored) for v in logged)
                elif call.func.attr.value == "append" and isinstance(receiver, cst.Subscript):
                    if dotted_name(receiver.value) in dicts and call.args:
                        values.append((call.args[0].value, line, dicts[dotted_name(receiver.value)]))
        return values

    # ---- the finding and its fix ------------------------------------------------------------

    def _check(self, value: cst.BaseExpression, line: cst.CSTNode, flow: RankFlow) -> None:
        if id(value) in self._reported or is_media(value) or flow.state(value, line) != Rank.PER_RANK:
            return
        self._reported.add(id(value))
        if not self.settings["report-rank0-loss"] and self._is_rank0_loss(value, line, flow):
            return
        launch = launch_of(self.model, value)
        if not launch.multi_process:
            return  # one process (a notebook no launcher starts): its value is the whole metric
        kind = "per-rank-value" if launch.shown(MULTI_PROCESS) else "per-rank-value-launch-unknown"
        accelerator = accelerator_in_scope(SemanticModel.of(self.source), value)
        if accelerator is None:
            self.report(value, NO_ACCELERATOR, kind=kind)
            return
        message = self.message.replace("accelerator.", f"{accelerator}.")
        sites = gather_sites(flow, value, line)
        if not sites:
            self.report(value, message, kind=kind)
            return
        # The message proposes what the fix writes (gather, or gather_for_metrics for a whole tensor).
        message = message.replace(f"{accelerator}.gather(x.mean()).mean()", proposed_gather(sites[0], accelerator))
        edits = [self._gather(site, accelerator) for site in sites]
        # The fix names the accelerator: it stands on that accelerator being bound on every path.
        missing = accelerator_may_be_none(self.model, accelerator, value)
        reason = Unsafe.ACCELERATOR_MAY_BE_NONE.text(missing=missing) if missing else self._unsafe_reason(sites, line, flow)
        self.report(value, message, fix=self.fix(*edits, reason=reason), kind=kind)

    def _unsafe_reason(self, sites: list[GatherSite], line: cst.CSTNode, flow: RankFlow) -> str | None:
        """Why the gathers may fail or change a number (the first site's reason), else why some
        rank may skip one, else None: the fix is safe."""
        for site in sites:
            if site.unsafe is not None:
                return site.unsafe_reason
        for site in sites:
            factory = made_on_cpu(site.tensor)
            if factory is not None:
                return Unsafe.MADE_ON_CPU.text(factory=factory)
        model = SemanticModel.of(self.source)
        for site in sites:
            # A gather is a collective: a rank that skips it leaves the others waiting forever.
            divergence = rank_divergence(model, site.tensor, lambda expr, _: flow.depends_on_rank(expr, line))
            if divergence is not None:
                return f"the gather may hang: {divergence.text}"
        return None

    def _is_rank0_loss(self, value: cst.BaseExpression, line: cst.CSTNode, flow: RankFlow) -> bool:
        """A loss logged by rank 0 as is (`loss.item()`, an auxiliary loss): common practice and an
        unbiased estimate of the run's, so reported only on opt-in. Per-rank statistics (rewards,
        accuracies, margins, log-probs) are always reported."""
        per_rank = [name for name in dotted_names_in(value) if flow.state_of_name(name, line) == Rank.PER_RANK]
        return bool(per_rank) and all("loss" in name.rsplit(".", 1)[-1].lower() for name in per_rank)

    def _gather(self, site: GatherSite, accelerator: str) -> Edit:
        edit = self.replace(site.tensor, gather_expression(site, accelerator))
        return wrapped_to_line_length(edit, site, accelerator, self.source, self.settings["line-length"])
