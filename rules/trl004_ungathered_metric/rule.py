"""TRL004 ungathered-metric: a per-rank tensor logged as a metric without a gather.

Every rank computes ``chosen_rewards.mean()`` over its own slice of the batch; the Trainer logs
from rank 0 only, so the curve describes one rank's data (DPO/CPO/ORPO/KTO in TRL did this until
they gathered first). The fix gathers the per-rank tensor before it is reduced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from trllint.core.findings import ReasonKind

from trllint.facts.rank_split import rank_divergence
from trllint.semantic.context import CONTEXT_METADATA, is_trainer_class, methods_of
from trllint.facts.launch.backends import MULTI_PROCESS
from trllint.facts.launch.model import launch_of
from trllint.facts.accelerators import accelerator_in_scope, accelerator_may_be_none
from trllint.facts.distributed import DISTRIBUTED_MARKERS, runs_distributed
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank
from trllint.facts.scope_flow import RankFlow
from trllint.core.cst.names import call_name, dotted_name, last_attribute
from trllint.rule.base import LINE_LENGTH_SETTING, AllOf, AnyOf, Calls, Defines, Edit, FindingKind, Reads, Rule, Setting

from .devices import converts_to_numpy, made_on_cpu
from .log_files import LOG_FILE_WORDS, log_file_values
from .forwarding_loggers import REACHES_A_LOGGER, FileLoggers, file_loggers
from .reduced_copies import reads_to_rename, reduced_copy, reduced_on_some_path
from .shard_evaluation import evaluated_by_some_ranks
from .sink_calls import Logged, fabrics_log_nothing, is_fabric_receiver, logged_arguments
from .gather_fix import gather_expression, proposed_gather, wrapped_to_line_length
from .gather_sites import GatherSite, gather_sites
from trllint.rules.trl004_ungathered_metric.metric_buffers import stored_metrics_reduced
from trllint.semantic.model import SemanticModel
from .sinks import (
    METRIC_BUFFERS,
    LIGHTNING_MODULES,
    METRIC_SINK_MARKERS,
    SINK_METHODS,
    TRAINER_METRIC_HELPERS,
)
from .metric_syntax import (
    accumulated_buffers,
    attributes_reaching_sinks,
    attributes_read_by_sinks,
    bound_buffer,
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
    """Why a fix is not proven to log the run's value on every process group (the fact it misses)."""

    ACCELERATOR_MAY_BE_NONE = "{missing}: the fixed code would gather through None where the original ran"
    MADE_ON_CPU = (
        "the value is made on the CPU by {factory}(...) with no device, and NCCL gathers GPU tensors only: "
        "make it on the accelerator's device first"
    )
    # The copy the code made may be the ranks' sum: only the code's own division makes it a mean.
    COPY_AS_MADE = "`{copy}` goes to the dashboard as the code made it: a sum over the ranks unless it was divided by their number"


# Lightning has its own reduction: no accelerator to gather with.
NO_ACCELERATOR_LIGHTNING = (
    "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice; reduce it "
    "across ranks before logging: `self.log(..., sync_dist=True)` in a LightningModule, "
    "`fabric.all_reduce(x, reduce_op=\"mean\")` in a Fabric loop"
)
PER_RANK_HEAD = "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice"
# A file that uses no accelerate (torch.distributed, DeepSpeed): the reduction is the process group's.
NO_ACCELERATE = (
    f"{PER_RANK_HEAD}; all-reduce it on every rank before logging "
    "(`{reduce}(x)` sums it; `op=ReduceOp.AVG` for a mean)"
)
# A training loss rank 0 logs as is: the value is its own sample, not the run's loss.
RANK0_LOSS_HEAD = "rank 0's own loss logged as the run's loss: it is rank 0's sample of its shard, not the run's loss"
# The ranks' mean was computed (for the console) and the per-rank value went to the dashboard.
REDUCED_COPY = (
    "per-rank value logged while its reduced copy `{copy}` is left unlogged: rank 0 logs only its own "
    "slice; log `{copy}` instead"
)
# Only some ranks (rank 0) evaluated, each over its own shard: the other shards were never seen.
EVALUATED_BY_SOME_RANKS = (
    "evaluated under a rank test over this rank's shard of the data only, then logged as the run's: the other "
    "ranks' shards are never evaluated; evaluate on every rank and all-reduce the result (or evaluate over "
    "the whole set) before logging"
)
# Values a buffer keeps whole for log() (`self.rewards = torch.cat([self.rewards, r])`): gathering
# a mean of them would change what the buffer holds, so the message says what to gather, no fix.
STORED_WHOLE = (
    "per-rank values kept in `{buffer}`, which log() reports as the run's: rank 0 reports only its own "
    "slice; gather them on every rank before they are kept (`gather_for_metrics`, `gather_object` for "
    "Python objects)"
)
# The suffix of the unproven twin of each kind: the same evidence, but no launch shows several processes.
LAUNCH_UNKNOWN = "-launch-unknown"
# No fix may name an accelerator the code does not provably bind there (AttributeError or
# UnboundLocalError at run time): the message says what to gather with instead.
NO_ACCELERATOR = (
    "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice; no accelerator "
    "is bound here on every path: gather it with the run's Accelerator (gather_for_metrics) or "
    "all-reduce it on every rank before logging"
)

@dataclass(frozen=True)
class LoggedValue:
    """A value a scope hands a sink, and how it reaches the Trainer's own logging, if it does."""

    value: cst.BaseExpression
    line: cst.CSTNode  # its statement
    stored: bool  # kept for the Trainer's `log()` (a metric buffer, `store_metrics`, a returned dict)
    # Its statement calls the Trainer's own `self.log(...)`.
    trainer_log: bool = False
    # The buffer it is stored into by binding it (`self.rewards = v`); None for the others.
    buffer: str | None = None


Handed = tuple[cst.BaseExpression, cst.CSTNode, bool]  # (value, its statement, stored for log())


class UngatheredMetric(Rule):
    code = "TRL004"
    name = "ungathered-metric"
    message = (
        "per-rank tensor logged as a metric without a gather: rank 0 logs only its own slice; "
        "reduce it on each rank and gather the ranks' values first: accelerator.gather(x.mean()).mean()"
    )
    fixable = "sometimes"
    kinds = {
        # The seed's bug (TRL's DPO metrics): the Trainer logs on the main process only, so what a
        # subclass hands its own logging from one rank's batch is that rank's slice.
        "trainer-metric": FindingKind(
            "a value computed from this rank's data that a Trainer subclass hands the Trainer's own logging "
            "(self.log, store_metrics, a metrics dict its step returns), under a launch of several processes"
        ),
        "trainer-metric-launch-unknown": FindingKind(
            "a value computed from this rank's data that a Trainer subclass hands the Trainer's own logging, "
            "where no launch shows several processes",
            unproven=True,
        ),
        "per-rank-value": FindingKind("a value computed from this rank's data, under a launch that shows several processes"),
        "per-rank-value-launch-unknown": FindingKind(
            "a value computed from this rank's data, where no launch shows several processes", unproven=True
        ),
        "rank0-loss": FindingKind("rank 0's own training loss logged as the run's, under a launch of several processes"),
        "rank0-loss-launch-unknown": FindingKind(
            "rank 0's own training loss logged as the run's, where no launch shows several processes "
            "(report-rank0-loss = true)",
            unproven=True,
        ),
        "reduced-copy-unlogged": FindingKind(
            "a per-rank value logged while the scope's reduced copy of it is not, under a launch of several processes"
        ),
        "reduced-copy-unlogged-launch-unknown": FindingKind(
            "a per-rank value logged while the scope's reduced copy of it is not, where no launch shows several "
            "processes",
            unproven=True,
        ),
        "shard-evaluated-by-some-ranks": FindingKind(
            "a value evaluated under a rank test over this rank's shard of a loader, under a launch of several processes"
        ),
        "shard-evaluated-by-some-ranks-launch-unknown": FindingKind(
            "a value evaluated under a rank test over this rank's shard of a loader, where no launch shows several "
            "processes",
            unproven=True,
        ),
    }
    # Last, the names: a sink called (`x.log(...)`, `add_scalar(...)`...), a metric buffer read, or
    # a trainer's metrics helper defined.
    prefilter = AllOf(
        AnyOf(*DISTRIBUTED_MARKERS, "lightning"),
        # a configured sink is a sink marker too; so is a project logger that forwards to a sink
        AnyOf(*METRIC_SINK_MARKERS, REACHES_A_LOGGER, setting="metric-sinks"),
        AnyOf(
            Calls(*SINK_METHODS),
            Reads(*{buffer.rsplit(".", 1)[-1] for buffer in METRIC_BUFFERS}),
            Defines(*TRAINER_METRIC_HELPERS),
            Calls("log"),  # whether a `.log` call's receiver is a tracker's is the rule's to say
            Calls("write"),  # a run's log file, when a rank test guards the write
            REACHES_A_LOGGER,
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
            None,
            "the training loss rank 0 logs as is (`loss.item()`): unset, reported where a launch of several "
            "processes is shown; true, also where none is; false, never",
        ),
    }
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def __init__(self, source, settings=None) -> None:
        super().__init__(source, settings)
        self._reported: set[int] = set()
        self._buffers: frozenset[str] = frozenset(METRIC_BUFFERS)
        self._rebound_buffers: frozenset[str] = frozenset()
        self._stored_reduced: dict[tuple[int, str | None], bool] = {}
        self._forwarders = FileLoggers()
        self._fabrics_log_nothing = False

    def check_module(self, model: SemanticModel) -> None:
        if not (runs_distributed(self.source) or model.imports.imports_any(*LIGHTNING_MODULES)):
            return
        definitions = model.definitions
        self._forwarders = file_loggers(model)
        self._fabrics_log_nothing = fabrics_log_nothing(model)
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
        reaching = attributes_reaching_sinks([flow.statements for flow in flows], self._logged_arguments)
        writes = frozenset(name.rsplit(".", 1)[-1] for name in (*METRIC_BUFFERS, *reaching))
        flows = flows_of(
            lambda scope: spells(scope, writes) or (isinstance(scope, cst.FunctionDef) and scope.name.value in helpers)
        )
        # `self.stats` when a sink logs what it holds and some method writes it like a buffer.
        self._buffers = frozenset(METRIC_BUFFERS) | written_as_buffers(read_by_sinks, [flow.statements for flow in flows])
        # `self.rewards = torch.cat([self.rewards, r])`: a buffer kept whole, which every binding stores into.
        self._rebound_buffers = accumulated_buffers(reaching - self._buffers, [flow.statements for flow in flows])
        logged_by_flow = [(flow, self._logged_values(flow, helpers)) for flow in flows]
        # The classes that gather some value they store for `log()`: a loss stored beside it
        # ungathered is no habit of logging rank 0's loss, but a metric the class left out.
        gathers_stored = {
            id(cls)
            for flow, values in logged_by_flow
            if (cls := self._class_of_method.get(id(flow.scope))) is not None
            and any(logged.stored and flow.state(logged.value, logged.line) == Rank.GLOBAL for logged in values)
        }
        for flow, values in logged_by_flow:
            cls = self._class_of_method.get(id(flow.scope))
            in_trainer = id(flow.scope) in self._trainer_methods
            for logged in values:
                if not (logged.stored and cls is not None and self._stored_are_reduced(cls, logged.buffer)):
                    trainer_logged = in_trainer and (logged.stored or logged.trainer_log)
                    beside_gathered = trainer_logged and logged.stored and id(cls) in gathers_stored
                    self._check(logged.value, logged.line, flow, trainer_logged, beside_gathered, logged.buffer)
        # A run's log file takes the losses only: the samples or texts rank 0 writes are its own.
        for flow in flows_of(lambda scope: scope is model.source.module or LOG_FILE_WORDS <= model.identifiers(scope)):
            for value, line in log_file_values(model, flow):
                if self._is_rank0_loss(value, line, flow):
                    self._check(value, line, flow)

    def _stored_are_reduced(self, cls: cst.ClassDef, buffer: str | None = None) -> bool:
        """Stored values are reduced across ranks by the class's own methods before they are
        logged: those of the metric buffers, or of the one buffer kept whole that a value is bound
        into (``buffer``: the class gathering its metrics says nothing of it). Asked once per class (and
        buffer), and only for a class that stores a value: the question reads every method of the
        class (or a base's summary), so asking it per method would be quadratic."""
        key = (id(cls), buffer)
        if key not in self._stored_reduced:
            buffers = self._buffers if buffer is None else frozenset({buffer})
            self._stored_reduced[key] = stored_metrics_reduced(
                self.source, cls, self._classes, buffers, lambda call: bool(self._logged_arguments(call)), buffer is not None
            )
        return self._stored_reduced[key]

    # ---- where metrics go -------------------------------------------------------------------

    def _logged_arguments(self, call: cst.Call) -> list[Logged]:
        """The arguments of ``call`` that a metric sink logs, or [] when it is no sink: a sink
        by its name, or a method of a logger class of the project that hands them to one."""
        if self._fabrics_log_nothing and is_fabric_receiver(call):
            return []  # the file's Fabrics have no loggers: nothing is recorded
        logged = logged_arguments(call, self.settings["metric-sinks"])
        return logged or self._forwarders.logged(call)

    @property
    def _words_that_log(self) -> frozenset[str]:
        """A word every call ``_logged_arguments`` reads as a sink spells: its method's name (a
        configured sink's last part too). A function that spells none hands no value to a sink
        itself; it matters only where it writes a buffer or returns to a helper's caller."""
        configured = (sink.rsplit(".", 1)[-1] for sink in self.settings["metric-sinks"])
        return frozenset({*SINK_METHODS, "log", *configured, *self._forwarders.method_names})

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
        (a metric buffer, ``store_metrics``, a dict returned to the trainer) rather than logged now,
        and whether its statement hands it to the Trainer's own ``self.log``."""
        values: list[Handed] = []
        buffer_of: dict[int, str] = {}  # id(value) -> the buffer its statement binds it into
        dicts: dict[str, bool] = {}  # metric dict name -> stored (False once any use logs it now)
        trainer_log_lines: set[int] = set()  # the statements that call the Trainer's own `self.log(...)`
        returns_to_sink = isinstance(flow.scope, cst.FunctionDef) and flow.scope.name.value in helpers
        for small, line in flow.statements:
            for call in statement_calls(small):
                stored = loose_name(call.func) == "self.store_metrics"
                if loose_name(call.func) == "self.log":
                    trainer_log_lines.add(id(line))
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
            elif (buffer := bound_buffer(small, self._rebound_buffers)) is not None:
                # `self.rewards = local.cpu()`, `self.texts += [t]`: what the buffer holds from now on
                for v in elements(getattr(small, "value", None)):
                    values.append((v, line, True))
                    buffer_of[id(v)] = buffer
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
        values += self._dict_contents(flow, dicts)
        return [
            LoggedValue(value, line, stored, id(line) in trainer_log_lines, buffer_of.get(id(value)))
            for value, line, stored in values
        ]

    @staticmethod
    def _reduced_here(flow: RankFlow, name: str, line: cst.CSTNode) -> bool:
        """The dict the sink logs was rebound to a reduction of the ranks' dicts before it
        (``info = self.accelerator.reduce(info, reduction="mean")``), or each of its entries was
        reduced in place (``for key in logs: dist.all_reduce(logs[key])``): every entry put in
        it earlier is reduced with it."""
        if flow.reduced_in_place(name, line):
            return True
        binding = flow.binding(name, line)
        value = binding.value if binding is not None else None
        return isinstance(value, cst.Call) and binding is not None and binding.state == Rank.GLOBAL and any(
            dotted_name(arg.value) == name for arg in value.args
        )

    def _dict_contents(self, flow: RankFlow, dicts: dict[str, bool]) -> list[Handed]:
        """What goes into the metric dicts: ``metrics[key] = value``, ``metrics.update(...)``, each
        with its statement and whether it is stored."""
        values: list[Handed] = []
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

    def _check(
        self,
        value: cst.BaseExpression,
        line: cst.CSTNode,
        flow: RankFlow,
        trainer_logged: bool = False,
        beside_gathered: bool = False,
        buffer: str | None = None,
    ) -> None:
        """Report ``value`` (logged in ``line``) if it is per-rank; ``trainer_logged``: handed to the
        Trainer's own logging; ``beside_gathered``: stored for it by a class that gathers another
        value it stores; ``buffer``: the buffer kept whole that its statement binds it into."""
        if id(value) in self._reported or is_media(value) or flow.state(value, line) != Rank.PER_RANK:
            return
        if flow.holds_the_rank(value, line):
            return  # which rank logs (`accelerator.process_index`), none of its data
        self._reported.add(id(value))
        launch = launch_of(self.model, value)
        if not launch.multi_process:
            return  # one process (a notebook no launcher starts): its value is the whole metric
        # The launch that shows several processes is the evidence of every default kind; without
        # one, the same finding is of the kind's unproven twin.
        evidence = launch.shown(MULTI_PROCESS)
        unknown = "" if evidence else LAUNCH_UNKNOWN
        copy = reduced_copy(flow, value, line)
        if copy is not None:
            # The code computed the ranks' value itself and logged the other one.
            renamed = [Edit(*self.span_of(read), copy.name) for read in reads_to_rename(value, copy, flow, line)]
            fix = self.fix(*renamed, reason=Unsafe.COPY_AS_MADE.text(copy=copy.name)) if renamed else None
            message = REDUCED_COPY.format(copy=copy.name)
            self.report(value, message, fix=fix, evidence=evidence, kind="reduced-copy-unlogged" + unknown)
            return
        if evaluated_by_some_ranks(self.model, flow, value, line):
            self.report(value, EVALUATED_BY_SOME_RANKS, evidence=evidence, kind="shard-evaluated-by-some-ranks" + unknown)
            return
        head, kind = PER_RANK_HEAD, ("trainer-metric" if trainer_logged else "per-rank-value") + unknown
        if self._is_rank0_loss(value, line, flow) and beside_gathered:
            # A loss stored with metrics the class gathers is a metric like them, no habit of
            # logging rank 0's loss; a kind of its own, as the graduated kind keeps to what it proves.
            kind = "per-rank-value" + unknown
        elif self._is_rank0_loss(value, line, flow):
            # Rank 0's sample of the loss: its own kind where a launch of several processes is
            # shown; with no such launch only when the setting asks for it.
            setting = self.settings["report-rank0-loss"]
            if setting is False or (setting is None and unknown) or reduced_on_some_path(flow, value, line):
                return
            head, kind = RANK0_LOSS_HEAD, "rank0-loss" + unknown
        if buffer is not None:
            self.report(value, STORED_WHOLE.format(buffer=buffer), evidence=evidence, kind=kind)
            return
        accelerator = accelerator_in_scope(SemanticModel.of(self.source), value)
        if accelerator is None:
            advice = NO_ACCELERATOR
            if self.model.imports.imports_any(*LIGHTNING_MODULES):
                advice = NO_ACCELERATOR_LIGHTNING
            elif not self.model.imports.imports_any("accelerate"):
                deepspeed = self.model.imports.imports_any("deepspeed")
                advice = NO_ACCELERATE.format(reduce="deepspeed.comm.all_reduce" if deepspeed else "torch.distributed.all_reduce")
            self.report(value, advice.replace(PER_RANK_HEAD, head), evidence=evidence, kind=kind)
            return
        message = self.message.replace("accelerator.", f"{accelerator}.").replace(PER_RANK_HEAD, head)
        sites = gather_sites(flow, value, line)
        # A value reduced as a NumPy array (`x.cpu().numpy().mean()`): no gather takes it, and
        # the tensor to gather instead is the user's choice.
        if not sites or any(converts_to_numpy(site.tensor) for site in sites):
            self.report(value, message, evidence=evidence, kind=kind)
            return
        # The message proposes what the fix writes (gather, or gather_for_metrics for a whole tensor).
        message = message.replace(f"{accelerator}.gather(x.mean()).mean()", proposed_gather(sites[0], accelerator))
        edits = [self._gather(site, accelerator) for site in sites]
        # The fix names the accelerator: it stands on that accelerator being bound on every path.
        missing = accelerator_may_be_none(self.model, accelerator, value)
        reason = Unsafe.ACCELERATOR_MAY_BE_NONE.text(missing=missing) if missing else self._unsafe_reason(sites, line, flow)
        self.report(value, message, fix=self.fix(*edits, reason=reason), evidence=evidence, kind=kind)

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
            divergence = rank_divergence(model, site.tensor)
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
