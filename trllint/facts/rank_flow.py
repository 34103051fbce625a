"""Was this value gathered across ranks? Which values in a function hold only this rank's data,
and where would a gather make one global?

Under DDP, DeepSpeed or FSDP every rank runs the same code on its own slice of the batch. A value
computed from that slice (the batch, the model's outputs on it, the loss) is *per-rank*; once it
passes through ``gather``, ``gather_for_metrics``, ``reduce``, ``torch.distributed.all_reduce`` or
a Trainer's ``_nested_gather`` it is *global*, and so is everything derived only from global
values (``rewards = gather(rewards_per_func).sum(1)``).

``RankFlow`` follows one function's simple assignments in statement order (branches in sequence,
loop bodies once): cheap, syntactic, and biased towards silence. A name reassigned in one branch
keeps the state of the last assignment read.
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_left
from functools import cached_property, partial
from typing import TYPE_CHECKING, Callable, Sequence, TypeGuard

import libcst as cst

from dataclasses import dataclass
from trllint.semantic.context import is_trainer_class, methods_of
from trllint.semantic.model import SemanticModel, imports_of
from trllint.facts.ranks import PLACEMENT_KEYWORDS, PLACEMENT_METHODS, RankFacts, rank_facts
from trllint.core.cst.names import COMPREHENSIONS, ImportMap, argument, assigned_names, assignment_targets, call_name, dotted_name, last_attribute, parameters
from trllint.core.cst import walk
from trllint.core.cst.walk import syntax_children
from trllint.core.prefilter import AllOf, AnyOf, Token
from trllint.core.findings import ReasonKind
from trllint.core.source import SourceFile

from trllint.semantic.project.summaries import ModuleFact
from trllint.semantic.project.file_view import project_view

if TYPE_CHECKING:
    from trllint.semantic.project.index import Definition, ProjectView


class Rank(enum.IntEnum):
    """What a value holds, ordered so that ``max`` joins two of them."""

    NO_DATA = 0  # constants, config, counters, shapes: not this rank's data
    GLOBAL = 1  # gathered or reduced across ranks, or derived only from such values
    PER_RANK = 2  # computed from this rank's batch, model outputs or loss


# Calls whose result holds every rank's data (leading underscores stripped: Trainer._nested_gather).
GATHERING_CALLS = frozenset(
    {
        "gather",
        "gather_for_metrics",
        "reduce",
        "all_gather",
        "all_reduce",
        "nested_gather",
        "gather_object",
        "all_gather_object",
        "all_gather_into_tensor",
    }
)
# torch.distributed collectives that write their result into an argument: its keyword and position.
IN_PLACE_COLLECTIVES = {
    "all_reduce": ("tensor", 0),
    "reduce": ("tensor", 0),
    "broadcast": ("tensor", 0),  # every rank ends with the source rank's tensor
    "broadcast_object_list": ("object_list", 0),
    "all_gather": ("tensor_list", 0),
    "all_gather_into_tensor": ("output_tensor", 0),
    "all_gather_object": ("object_list", 0),
    "gather": ("gather_list", 1),
}
# Tensor methods that reduce over elements: gathering before them gives the cross-rank value.
REDUCTIONS = frozenset(
    {"mean", "sum", "nanmean", "nansum", "max", "min", "amax", "amin", "std", "var", "median", "prod", "norm",
     "count_nonzero", "logsumexp"}
)
# Tensor methods that turn a tensor into Python data or move it: a gather must come before them.
CONVERSIONS = frozenset({"item", "tolist", "numpy", "cpu"})
# Full reductions that compose across ranks (the sum of the ranks' sums is the global sum): the
# rank's scalar is gathered and reduced again, so tensors padded to a different length on each
# rank never meet in one gather.
COMPOSABLE_REDUCTIONS = frozenset({"sum", "nansum", "max", "min", "amax", "amin", "prod"})
# Statistics (methods or helpers such as TRL's nanstd) whose mean over ranks is not their value
# over all ranks.
SPREAD_STATISTICS = frozenset({"std", "var", "nanstd", "nanvar", "median", "nanmedian", "quantile"})
# Methods and functions whose result is a floating tensor whatever their input: `mean()` of its
# gather works (on an integer tensor it raises "mean(): could not infer output dtype").
FLOATING_RESULTS = frozenset(
    {"mean", "nanmean", "std", "var", "float", "double", "half", "bfloat16", "sigmoid", "softmax", "log_softmax",
     "exp", "log", "sqrt", "logsigmoid", "cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
     "nll_loss", "kl_div", "logsumexp", "norm"}
)
# Model output fields that are floating tensors.
FLOATING_OUTPUTS = frozenset({"loss", "logits", "aux_loss"})


# Element-wise or bookkeeping methods that commute with a gather along the batch dimension.
ELEMENTWISE = frozenset(
    {"detach", "float", "double", "half", "bfloat16", "to", "clone", "contiguous", "abs", "exp", "log", "neg",
     "sqrt", "sigmoid", "clamp", "squeeze"}
)
# Reads of shape or placement, not of data: the same kind of thing on every rank.
SHAPE_READS = frozenset({"size", "shape", "numel", "nelement", "dim", "ndim", "ndimension", "device", "dtype"})
NO_DATA_BUILTINS = frozenset({"len", "range", "isinstance", "hasattr", "type", "str", "repr", "print"})
# Parameter names that carry a batch or what the model made of it (compute_loss(model, inputs)).
DATA_PARAMETER_HINTS = (
    "batch", "input", "output", "logit", "logp", "loss", "label", "reward", "pred", "completion", "sample",
    "example", "target", "mask", "hidden", "embed",
)


# A parameter named like data but holding its position or size (`batch_idx`, `batch_size`,
# `sample_index`, `num_labels`), or a multiplier set by the configuration (`loss_scale`,
# `reward_coef`): a counter or a setting, not this rank's tensors.
_COUNTER_NAME = re.compile(r"(?:_idx|_index|_size|_step|_steps|_epoch|_len|_scale|_coef|_coeff)$|^(?:num|n)_")
# Annotations of Python scalars: a parameter typed `batch_idx: int` holds no tensor to gather.
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})


def _named_like_data(param: cst.Param) -> bool:
    """A parameter that carries a batch or what the model made of it, by its name (``inputs``,
    ``chosen_logps``), unless its name or its annotation says it is a counter or a scalar."""
    name = param.name.value.lower()
    if not any(hint in name for hint in DATA_PARAMETER_HINTS) or _COUNTER_NAME.search(name):
        return False
    annotation = param.annotation.annotation if param.annotation is not None else None
    return dotted_name(annotation) not in _SCALAR_ANNOTATIONS if annotation is not None else True


# Clocks: a quantity divided by a duration they measure is a speed (tokens per second,
# samples per second). In synchronous data-parallel training every rank's step takes the same
# wall-clock time and a rate is a measurement of the process, meant per device: it describes
# no rank's slice of the data, and the mean over the ranks a gather would log barely moves it.
_CLOCKS = frozenset(
    {"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns", "time.monotonic_ns",
     "timeit.default_timer"}
)


# Parameters that hold a count every rank shares: transformers passes compute_loss the number of
# items in the whole step's batch, summed across ranks when tokens are averaged across devices.
GLOBAL_PARAMETERS = frozenset({"num_items_in_batch"})
# Libraries whose functions compute on their arguments without talking to other ranks (the
# collectives among them are matched by name first): their results are as per-rank as their inputs.
LOCAL_COMPUTE_LIBRARIES = frozenset(
    {"torch", "numpy", "math", "statistics", "einops", "scipy", "functools", "itertools", "operator", "collections",
     "transformers", "trl", "peft", "accelerate", "deepspeed"}
)


# Methods of TRL's trainers that return this rank's values, read from their source (trl 0.x-1.x):
# a subclass calling them gets per-rank tensors. Any other inherited method is unknown.
PER_RANK_LIBRARY_METHODS = frozenset(
    {
        "concatenated_forward", "compute_ref_log_probs", "compute_reference_log_probs", "dpo_loss", "kto_loss",
        "cpo_loss", "simpo_loss", "odds_ratio_loss", "get_batch_logps", "_get_per_token_logps",
        "_get_per_token_logps_and_entropies", "forward",
    }
)


class GatherUnsafe(ReasonKind):
    """Why gathering at a site may fail or change a number; ``{method}`` is the reduction."""

    WHOLE_TENSOR = (
        "the logged value is a whole tensor with no reduction: its shape may differ per rank, and the "
        "fix logs its mean over the ranks instead"
    )
    REDUCED_OVER_DIMENSION = "{method}(...) over a dimension leaves a tensor whose shape may differ per rank"
    SPREAD_STATISTIC = "the mean of the ranks' {method}() is not the {method}() over all ranks"


# Text every file that runs_distributed() accepts contains: the imports it reads, the
# torch.distributed attribute path, or a Trainer base class. It lets the prefilter skip the rest.
DISTRIBUTED_MARKERS: tuple[Token, ...] = (
    "Trainer",
    "torch.distributed",
    # `from deepspeed.x import y`; `import accelerate`, `import os, deepspeed` (lines may continue)
    re.compile(r"from[\s\\]+(?:accelerate|deepspeed)"),
    re.compile(r"import[ \t][^\n]*(?:\\\n[^\n]*)*?(?:accelerate|deepspeed)"),
    re.compile(r"import[\s\w,(\\]*distributed"),  # `from torch import (nn, distributed)`
)


def runs_distributed(source: SourceFile) -> bool:
    """The file uses accelerate, torch.distributed or DeepSpeed, or subclasses a Trainer."""
    model = SemanticModel.of(source)
    return model.once((runs_distributed,), lambda: file_runs_distributed(source, model.imports))


def rank_flows(model: SemanticModel) -> FileRankFlows:
    """The file's per-scope rank flows, and which of its functions return a gathered value."""
    return model.once((rank_flows,), lambda: FileRankFlows(model.source))


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
# linter cannot judge (see FileRankFlows.returns_global, returns_unknown). Version 2: the flows
# read returned tuples element-wise and data-named parameters as their callers' values. Version
# 3: a function's callers are where its own name is called or read as a value.
RETURNS_ACROSS_RANKS = ModuleFact("rank-flow.returns", 3, _returns_across_ranks)


def reduced_parameters(function: cst.FunctionDef, imports: ImportMap) -> list[int]:
    """The positions of the parameters ``function`` reduces in place across ranks
    (``def all_reduce_mean(t): dist.all_reduce(t); t /= world_size``): each is handed to an
    in-place torch.distributed collective in the function's own statements and never rebound
    there (after ``t = t.clone()`` the collective reduces a copy the caller never sees; ``t /= n``
    divides the same tensor)."""
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if not positional:
        return []
    body = _ReducedInBody(function, imports)
    walk.visit(function, body)
    return [i for i, name in enumerate(positional) if name in body.outputs and name not in body.rebound]


class _ReducedInBody(cst.CSTVisitor):
    """What one function's own statements rebind, and hand to an in-place collective. A class of
    the module, not one made per call: a class is a reference cycle, which would keep the
    function's tree alive until the collector runs, and the walk works out a class's hooks once."""

    def __init__(self, function: cst.FunctionDef, imports: ImportMap) -> None:
        super().__init__()
        self.function = function
        self.imports = imports
        self.rebound: set[str] = set()
        self.outputs: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function  # a nested function runs when called, not here

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.rebound.update(assigned_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.rebound.update(assigned_names(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        full = self.imports.resolve(call_name(node))
        method = last_attribute(full)
        if method in IN_PLACE_COLLECTIVES and _is_torch_distributed(full):
            output = argument(node, *IN_PLACE_COLLECTIVES[method])
            name = dotted_name(output.value) if output is not None else None
            if name is not None:
                self.outputs.add(name)


def _reduces_in_place(model: SemanticModel) -> dict[str, list[int]]:
    """``f`` -> the positions of the parameters the module's function ``f`` reduces in place."""
    answer: dict[str, list[int]] = {}
    for statement in model.source.module.body:
        if isinstance(statement, cst.FunctionDef):
            positions = reduced_parameters(statement, model.imports)
            if positions:
                answer[statement.name.value] = positions
            else:
                answer.pop(statement.name.value, None)  # a later definition of the name wins
    return answer


# Which functions of a module all-reduce (or broadcast) an argument in place, and which.
REDUCES_IN_PLACE = ModuleFact("rank-flow.reduces-in-place", 1, _reduces_in_place, calls=frozenset(IN_PLACE_COLLECTIVES))
# What a module must spell to reduce an argument in place: the collective's name, however it is
# imported, and a way to reach torch.distributed, since a collective counts only when its full
# name starts with `torch.distributed.` or `dist.`: `torch.distributed` itself, the module
# imported as `distributed` and read (`distributed.all_reduce`) or renamed (`distributed as d`), or
# a name `dist` read (`dist.all_reduce`), renamed (`import dist as d`) or imported from (`from
# dist import x`). A module that misses either part is not parsed for REDUCES_IN_PLACE (its answer
# is {}): "gather" in `asyncio.gather` or a comment, and "distributed" in another, are not enough.
_NAMES_AN_IN_PLACE_COLLECTIVE = AllOf(
    AnyOf(*IN_PLACE_COLLECTIVES),
    AnyOf(
        re.compile(r"torch[\s\\]*\.[\s\\]*distributed"),
        # `\b` written as a look-behind after the word, so that `re` scans for the literal
        # (trllint.facts.markers): thirty times faster on a 6,000-line module.
        re.compile(r"distributed(?<!\wdistributed)[\s\\]*(?:\.|as\b)"),
        re.compile(r"dist(?<!\wdist)[\s\\]*(?:\.|as\b|import\b)"),
    ),
)


def is_global(model: SemanticModel, expr: cst.CSTNode, at: cst.CSTNode) -> bool:
    """``expr``, read at ``at``, holds the same value on every rank (reduced or gathered)."""
    scope = model.context.enclosing_function(at) or model.source.module
    return rank_flows(model).flow(scope).state(expr, at) == Rank.GLOBAL


def file_runs_distributed(source: SourceFile, imports: ImportMap) -> bool:
    return (
        imports.imports_any("accelerate", "torch.distributed", "deepspeed")
        or "torch.distributed." in source.text
        or any(isinstance(s, cst.ClassDef) and is_trainer_class(s) for s in source.module.body)
    )


def is_gathering_call(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (_method_or_function(node) or "").lstrip("_") in GATHERING_CALLS


class Binding:
    """One assignment of a name, in a flow.

    Its state is worked out when something first reads it, not when the flow is built: most
    assignments of a function never reach a metric or a ``return``, and working theirs out would
    ask for the summary of every project helper they call. The flow works a state out at the
    assignment's own place in the statement order, as an eager walk would, so the answer is the
    same (see ``RankFlow._force``).
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
        self.flow: RankFlow | None = None
        self.index = -1  # among its flow's lazy bindings, in the order they were made
        self.resolving = False

    @property
    def state(self) -> Rank:
        if self.flow is not None:
            self.flow._force(self)
            if self._state is None:
                return Rank.NO_DATA  # asked again while it is being worked out: see RankFlow._force
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


@dataclass(frozen=True)
class GatherSite:
    """Where a gather makes a logged value global: wrap ``tensor`` in the gather, then reduce the
    gathered copy with ``reduce_after`` (one value per rank)."""

    tensor: cst.BaseExpression
    reduce_after: str
    cast_to_float: bool = False  # an integer or bool tensor: `mean()` of its gather would raise
    # Why the fix may fail or change a number, on one process or many; None: it cannot.
    unsafe: GatherUnsafe | None = None
    unsafe_method: str = ""  # the reduction the reason names (`std`, `mean`)

    @property
    def unsafe_reason(self) -> str | None:
        return self.unsafe.text(method=self.unsafe_method) if self.unsafe is not None else None

    @property
    def keeps_single_process_value(self) -> bool:
        return self.unsafe is None


class RankFlow:
    """Per-rank or global, for the values of one function (or a module's top-level code)."""

    def __init__(
        self,
        scope: cst.FunctionDef | cst.Module,
        imports: ImportMap,
        returns_global: Callable[[str], bool] = lambda name: False,
        is_unknown_call: Callable[[cst.Call], bool] = lambda call: False,
        is_global_call: Callable[[cst.Call], bool] = lambda call: False,
        passed_to: Callable[[cst.FunctionDef, str], Rank | None] = lambda function, name: None,
        is_project_call: Callable[[cst.Call], bool] = lambda call: False,
        ranks: RankFacts | None = None,  # the file's rank tests; without them, only the usual names
        reduced_arguments: Callable[[cst.Call], list[int]] = lambda call: [],
        returned_element: Callable[[cst.Call, int, int], Rank | None] = lambda call, index, count: None,
        arguments_per_rank: bool = False,  # every parameter but `self`/`cls` holds this rank's data
    ) -> None:
        self.scope = scope
        self._returned_element = returned_element
        self._arguments_per_rank = arguments_per_rank
        self._reduced_arguments = reduced_arguments
        self._ranks = ranks if ranks is not None else RankFacts(cst.Module([]))
        self._passed_to = passed_to
        self._is_project_call = is_project_call
        # > 0 while reading the arguments of a project helper: a parameter that is per-rank only
        # by its name reads as unknown there (see _state).
        self._strict = 0
        self._imports = imports
        self._returns_global = returns_global
        self._is_unknown_call = is_unknown_call
        self._is_global_call = is_global_call
        self._order: dict[int, int] = {}
        self._synthetic: list[cst.CSTNode] = []  # kept alive: their ids are keys of _order
        self._bindings: dict[str, list[tuple[int, Binding]]] = {}
        self._lazy: list[Binding] = []  # bindings whose state is not worked out yet, in order made
        self._forced_upto = 0  # every lazy binding before this index is worked out
        self._depth = 0  # lazy bindings being worked out, one inside another
        self.statements: list[tuple[cst.CSTNode, cst.CSTNode]] = []  # (small statement, its line)
        if isinstance(scope, cst.FunctionDef):
            self._bind_parameters(scope)
            self._walk(scope.body)
        else:
            self._walk(scope)

    @classmethod
    def of(cls, source: SourceFile, scope: cst.FunctionDef | cst.Module) -> RankFlow:
        """The flow of ``scope``, built once per file; calls to the file's own functions that
        return a gathered value (``global_masked_mean(x)``) read as global."""
        return rank_flows(SemanticModel.of(source)).flow(scope)

    def release(self) -> None:
        """Unlink the bindings never worked out from this flow (they point at each other)."""
        for binding in self._lazy:
            binding.flow = binding.resolve = None
        self.__dict__.clear()

    # ---- questions ----------------------------------------------------------------------

    def state(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> Rank:
        """Per-rank, global or no data, for ``expr`` evaluated in statement ``at``."""
        return self._state(expr, self._order.get(id(at), len(self._order) + 1))

    def depends_on_rank(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> bool:
        """``expr`` may differ per rank: it reads this rank's data, its size (``len(batch)``) or its index."""
        return self._depends_on_rank(expr, self._order.get(id(at), len(self._order) + 1), set())

    def _depends_on_rank(self, node: cst.CSTNode, order: int, followed: set[int]) -> bool:
        if isinstance(node, (cst.Name, cst.Attribute)):
            if self._state(node, order) == Rank.PER_RANK:
                return True
            binding = self._lookup(dotted_name(node) or "", order)
            if binding is not None:
                if id(binding) in followed or binding.value is None:
                    return False
                followed.add(id(binding))  # each assignment is read once (`x = f(x)` loops)
                return self._depends_on_rank(binding.value, order, followed)
            return isinstance(node, cst.Attribute) and self._depends_on_rank(node.value, order, followed)
        if isinstance(node, cst.Call) and self._state(node, order) == Rank.GLOBAL:
            return False
        if isinstance(node, cst.Comparison) and self._ranks.agreed_by_every_rank(node):
            return False  # `local_rank != -1`: reads the rank, answered alike on every rank
        return any(self._depends_on_rank(child, order, followed) for child in syntax_children(node))

    def state_of_name(self, name: str, at: cst.CSTNode | None) -> Rank:
        """Per-rank, global or no data, for the dotted name ``name`` read in statement ``at``."""
        return self.state(cst.parse_expression(name), at) if "." in name else self.state(cst.Name(name), at)

    def binding(self, name: str, at: cst.CSTNode | None) -> Binding | None:
        """The assignment of ``name`` that statement ``at`` reads."""
        return self._lookup(name, self._order.get(id(at), len(self._order) + 1))

    def gather_sites(self, expr: cst.BaseExpression, at: cst.CSTNode | None) -> list[GatherSite]:
        """Where to gather so that the per-rank tensors in ``expr`` become global (may be empty)."""
        sites: dict[int, GatherSite | None] = {}  # None: a per-rank part with no tensor to gather
        self._collect_sites(expr, at, sites, depth=0)
        found = [site for site in sites.values() if site is not None]
        return found if len(found) == len(sites) else []

    # ---- building the flow ----------------------------------------------------------------

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
            if param.default is None and _named_like_data(param):
                self._bind(name, self._deferred(None, function, False, partial(self._data_parameter, function, name)), 0)
            else:
                self._bind(name, Binding(None, plain_state, function, False), 0)

    def _data_parameter(self, function: cst.FunctionDef, name: str) -> Rank:
        # Named like data, so this rank's, unless the file's calls say what it holds.
        passed = self._passed_to(function, name)
        return passed if passed is not None else Rank.PER_RANK

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
            self._bind_reduced_by_loop(statement)
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
        elif isinstance(small, cst.AugAssign):
            name = dotted_name(small.target)
            if name is not None:
                joined = partial(self._joined_state, small.target, small.value, order)
                self._bind(name, self._deferred(small.value, line, False, joined), order)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            self._bind_collective_output(small.value, line, order)
            for name in self._names_reduced_by_helper(small.value):
                self._bind(name, Binding(None, Rank.GLOBAL, line, False), order)

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
            and _is_own_function_call(value)
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

    def _element_state(self, call: cst.Call, index: int, count: int, order: int) -> Rank:
        """Element ``index`` of the tuple ``call`` returns: what the function's returns put there
        whatever its arguments hold (a value it gathered, one read from no argument), else what
        the whole call holds (its arguments decide)."""
        element = self._returned_element(call, index, count)
        if element is None:
            return self._state(call, order)
        if element != Rank.PER_RANK:
            return element
        if self._is_unknown_call(call):
            return Rank.NO_DATA  # its returns mix gathered and local values: unknown is silent
        # The element may carry an argument: the arguments decide (not the other elements, which
        # `returns_global` would read into a tuple with a gathered neighbour).
        return max((self._state(part, order) for part in _data_parts(call)), default=Rank.NO_DATA)

    def _iterable_state(self, iterable: cst.BaseExpression, order: int) -> Rank:
        # Each rank iterates its own shard of a (prepared) data loader.
        for node in names_in(iterable):
            if "loader" in node.lower():
                return Rank.PER_RANK
        return self._state(iterable, order)

    def _bind_collective_output(self, call: cst.Call, line: cst.CSTNode, order: int) -> None:
        full = self._imports.resolve(call_name(call))
        method = last_attribute(full)
        if method not in IN_PLACE_COLLECTIVES or not _is_torch_distributed(full):
            return
        output = argument(call, *IN_PLACE_COLLECTIVES[method])
        name = dotted_name(output.value) if output is not None else None
        if name is not None:
            self._bind(name, Binding(None, Rank.GLOBAL, line, False), order)

    def _names_reduced_by_helper(self, call: cst.Call) -> list[str]:
        """The names a helper reduces in place (``all_reduce_mean(loss)``: see ``reduced_parameters``)."""
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

    def _bind_reduced_by_loop(self, loop: cst.For) -> None:
        """``for t in (correct, total): dist.all_reduce(t)``, ``for v in sums.values(): ...`` and
        ``for k in sums: dist.all_reduce(sums[k])``: every element the loop visits is reduced in
        place, so after the loop each of the names (or the whole container) is global."""
        target = dotted_name(loop.target)
        if target is None:
            return
        reduced = self._reduced_in_place(loop.body)
        iterable = loop.iter
        names: list[str | None] = []
        if isinstance(iterable, (cst.Tuple, cst.List)) and target in reduced:
            names = [dotted_name(element.value) for element in iterable.elements]
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
            container = dotted_name(iterable.func.value)
            method = iterable.func.attr.value
            if (method == "values" and target in reduced) or (method == "keys" and f"{container}[{target}]" in reduced):
                names = [container]
        elif f"{dotted_name(iterable)}[{target}]" in reduced:
            names = [dotted_name(iterable)]
        known = [name for name in names if name is not None]
        if not known or len(known) != len(names):
            return
        marker = cst.Pass()  # a statement of its own in the order: after the loop
        self._synthetic.append(marker)
        order = self._next(marker)
        for name in known:
            self._bind(name, Binding(None, Rank.GLOBAL, loop, False), order)

    def _reduced_in_place(self, body: cst.BaseSuite) -> set[str]:
        """What the loop body's own statements reduce in place: ``t`` for ``dist.all_reduce(t)``,
        ``sums[key]`` for ``dist.all_reduce(sums[key])``."""
        found: set[str] = set()
        lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for line in lines:
            for small in getattr(line, "body", ()) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ():
                call = small.value if isinstance(small, cst.Expr) else None
                if not isinstance(call, cst.Call):
                    continue
                found.update(self._names_reduced_by_helper(call))
                full = self._imports.resolve(call_name(call))
                method = last_attribute(full)
                if method not in IN_PLACE_COLLECTIVES or not _is_torch_distributed(full):
                    continue
                output = argument(call, *IN_PLACE_COLLECTIVES[method])
                if output is None:
                    continue
                value = output.value
                if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index):
                    found.add(f"{dotted_name(value.value)}[{dotted_name(value.slice[0].slice.value)}]")
                elif dotted_name(value) is not None:
                    found.add(dotted_name(value) or "")
        return found

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
        try:
            result = binding.resolve()  # type: ignore[misc]  # a binding is forced only while lazy, so set
        finally:
            self._strict = strict
            self._depth -= 1
            binding.resolving = False
        if isinstance(result, tuple):
            state, wider = result
            binding._value, binding._statement = wider.value, wider.statement
        else:
            state = result
        binding._state, binding.resolve, binding.flow = state, None, None

    def _lookup(self, name: str, order: int) -> Binding | None:
        # Bindings are made in statement order, so each name's list is sorted by order: a
        # binary search keeps a name assigned on every line of a long loop linear, not quadratic.
        bindings = self._bindings.get(name)
        if not bindings:
            return None
        before = bisect_left(bindings, order, key=_order_of)
        return bindings[before - 1][1] if before else None

    # ---- evaluating an expression ------------------------------------------------------------

    def _state(self, node: cst.CSTNode, order: int) -> Rank:
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, (cst.Divide, cst.FloorDivide))
            and self._reads_clock(node.right, order, 0)
        ):
            return Rank.NO_DATA  # a rate over wall-clock time (see _CLOCKS)
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            binding = self._lookup(name, order) if name else None
            if binding is not None:
                if self._strict and binding.statement is self.scope and binding.state == Rank.PER_RANK:
                    return Rank.NO_DATA  # a parameter named like data: its callers may pass gathered values
                return binding.state
            if isinstance(node, cst.Attribute):
                if node.attr.value in SHAPE_READS:
                    return Rank.NO_DATA
                if self._ranks.is_rank_index(node):
                    return Rank.PER_RANK  # this process's rank: a different number on every rank
                return self._state(node.value, order)
            return Rank.PER_RANK if self._ranks.is_rank_index(node) else Rank.NO_DATA  # a global `local_rank`
        if isinstance(node, cst.Call):
            method = _method_or_function(node) or ""
            if method.lstrip("_") in GATHERING_CALLS:
                return Rank.GLOBAL
            if self._ranks.is_rank_index(node) or self._ranks.is_rank_index(node.func):
                return Rank.PER_RANK  # `dist.get_rank()`, `os.environ.get("RANK")`, `self.rank()`
            if _is_own_function_call(node) and self._returns_global(method):
                return Rank.GLOBAL
            if self._is_global_call(node):
                return Rank.GLOBAL  # a helper of another module of the project that reduces
            if self._is_unknown_call(node):
                # A method inherited from a library trainer or a helper of another module: it may
                # gather before it returns (GRPO's reward computation does). Unknown is silent.
                return Rank.NO_DATA
            if method in SHAPE_READS or (isinstance(node.func, cst.Name) and method in NO_DATA_BUILTINS):
                return Rank.NO_DATA
            if isinstance(node.func, cst.Name) and method in ("next", "iter") and node.args:
                # `next(batches)`, `iter(loader)`: an element of what is iterated, as a `for` reads it.
                return self._iterable_state(node.args[0].value, order)
            parts = _data_parts(node)
            if self._is_project_call(node):
                # A helper of another module of the project is read through its arguments only on
                # what this function shows of them: a parameter's name is no proof (ms-swift's
                # compute_reward_metrics(rewards_per_func=...) gets the gathered rewards).
                self._strict += 1
                try:
                    return max((self._state(p, order) for p in parts), default=Rank.NO_DATA)
                finally:
                    self._strict -= 1
            return max((self._state(p, order) for p in parts), default=Rank.NO_DATA)
        if isinstance(node, (cst.Lambda, cst.BaseString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)):
            return Rank.NO_DATA
        if isinstance(node, cst.Arg):
            return self._state(node.value, order)
        if isinstance(node, cst.Subscript) and self._ranks.is_rank_index(node):
            return Rank.PER_RANK  # `os.environ["LOCAL_RANK"]`
        if isinstance(node, cst.Comparison) and self._ranks.agreed_by_every_rank(node):
            return Rank.NO_DATA  # `local_rank != -1`: the same answer on every rank
        if isinstance(node, cst.Comparison) and self._loader_exhausted(node, order):
            return Rank.NO_DATA
        if isinstance(node, cst.IfExp) and self._ranks.only_rank_tests(node.test):
            # `ModelEMA(model) if RANK in {-1, 0} else None`: the rank test picks which object a
            # rank holds, and neither arm is this rank's data (an arm that is, or the rank, still counts).
            return max(self._state(node.body, order), self._state(node.orelse, order))
        if isinstance(node, cst.CompFor):
            parts = [node.iter, *(c.test for c in node.ifs)]
            if node.inner_for_in is not None:
                parts.append(node.inner_for_in)
            return max((self._state(p, order) for p in parts), default=Rank.NO_DATA)
        # Operators, displays, subscripts, comprehensions: what their parts hold.
        return max((self._state(child, order) for child in syntax_children(node)), default=Rank.NO_DATA)

    def _loader_exhausted(self, test: cst.Comparison, order: int) -> bool:
        """``batch is None`` after ``batch = next(iterator, None)``: the data runs out on every rank
        at the same step (a DistributedSampler pads each rank's shard to the same length, and
        accelerate's prepared loaders give every rank the same number of batches), so the test is
        None on every rank at once, whatever the batch holds."""
        if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)):
            return False
        comparator = test.comparisons[0].comparator
        if not (isinstance(comparator, cst.Name) and comparator.value == "None"):
            return False
        binding = self._lookup(dotted_name(test.left) or "", order)
        value = binding.value if binding is not None else None
        return (
            isinstance(value, cst.Call)
            and call_name(value) == "next"
            and len(value.args) == 2
            and isinstance(value.args[1].value, cst.Name)
            and value.args[1].value.value == "None"
        )

    def _reads_clock(self, node: cst.CSTNode, order: int, depth: int) -> bool:
        """``node`` is a duration read from a clock: ``time.time() - start``, or a name bound to one."""
        if depth > 3:
            return False
        if isinstance(node, cst.Call):
            return self._imports.resolve(call_name(node)) in _CLOCKS
        if isinstance(node, (cst.Name, cst.Attribute)):
            binding = self._lookup(dotted_name(node) or "", order)
            return binding is not None and binding.value is not None and self._reads_clock(binding.value, order, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Subtract, cst.Divide, cst.Multiply)):
            return self._reads_clock(node.left, order, depth + 1)  # `(time.time() - t0) / 60`, `... * 1000`
        return False

    # ---- where to gather ----------------------------------------------------------------

    def _collect_sites(
        self, expr: cst.BaseExpression, at: cst.CSTNode | None, sites: dict[int, GatherSite | None], depth: int
    ) -> None:
        order = self._order.get(id(at), len(self._order) + 1)
        if depth > 8 or self._state(expr, order) != Rank.PER_RANK:
            return
        # Peel what is applied after the last reduction: conversions to Python or the CPU (the
        # gather must come before them: NCCL gathers device tensors) and element-wise methods.
        node, below_conversion, peeled, one_element = expr, expr, False, False
        while isinstance(node, cst.Call):
            method = _method_or_function(node)
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            first = node.args[0].value if node.args else None
            if receiver is not None and dotted_name(receiver) == "torch":
                if method not in REDUCTIONS or first is None:
                    break
                target, reduce_arguments = first, node.args[1:]  # torch.mean(x)
            elif receiver is not None and method in REDUCTIONS:
                target, reduce_arguments = receiver, node.args
            elif receiver is not None and (method in CONVERSIONS or method in ELEMENTWISE):
                if method in CONVERSIONS:
                    below_conversion, one_element = receiver, one_element or method == "item"
                node, peeled = receiver, True
                continue
            elif isinstance(node.func, cst.Name) and method == "float" and first is not None and len(node.args) == 1:
                node = below_conversion = first
                peeled = one_element = True
                continue
            else:
                break
            if self._state(target, order) != Rank.PER_RANK:
                return
            # Reduce on the rank first and gather the rank's 0-d result: the ranks' tensors may
            # differ in shape (per-rank padding, masks), a 0-d result never does.
            sites[id(node)] = _site_for_reduction(node, method or "", reduce_arguments)
            return
        if peeled and one_element:
            # `loss.item()`: one element on every rank; gathered, then averaged over the ranks.
            statistic = _method_or_function(below_conversion) if isinstance(below_conversion, cst.Call) else None
            spread = statistic in SPREAD_STATISTICS
            sites[id(below_conversion)] = GatherSite(
                below_conversion,
                "mean",
                not self._is_floating(below_conversion, order),
                GatherUnsafe.SPREAD_STATISTIC if spread else None,
                (statistic or "") if spread else "",
            )
            return
        if peeled:
            sites[id(below_conversion)] = GatherSite(below_conversion, "mean", unsafe=GatherUnsafe.WHOLE_TENSOR)
            return
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
                numerator: dict[int, GatherSite | None] = {}
                self._collect_sites(node.left, at, numerator, depth + 1)
                if any(site and site.reduce_after in COMPOSABLE_REDUCTIONS for site in numerator.values()):
                    # `correct.sum().item() / len(labels)`: the ranks' summed count over this rank's
                    # size is no mean at all; which denominator is meant is for a human to say.
                    sites[id(node)] = None
                    return
            for child in syntax_children(node):
                if isinstance(child, cst.BaseExpression):
                    self._collect_sites(child, at, sites, depth + 1)
                elif isinstance(child, cst.ComparisonTarget):
                    self._collect_sites(child.comparator, at, sites, depth + 1)
            return
        if isinstance(node, (cst.Name, cst.Attribute)):
            binding = self.binding(dotted_name(node) or "", at)
            if binding is not None and _is_python_number(binding.value):
                if binding.plain:
                    # `length = mask.sum(1).float().mean().item()`: only the assignment can gather it.
                    self._collect_sites(binding.value, binding.statement, sites, depth + 1)
                else:
                    sites[id(node)] = None  # a Python number: no tensor to gather
                return
            if binding is not None and binding.value is not None and _may_hold_python_number(binding.value):
                # `offset = max(lengths.max().item() + 1, ctx)`: `gather(offset)` would raise on a number.
                sites[id(node)] = None
                return
            if binding is not None and binding.value is None and isinstance(binding.statement, (cst.For, cst.CompFor)):
                # `for key, value in metrics.items()`: an element of what a helper returned may be
                # a Python number (`.item()` in ms-swift's compute_sdar_loss); no gather can take it.
                sites[id(node)] = None
                return
        if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
            sites[id(node)] = GatherSite(node, "mean", unsafe=GatherUnsafe.WHOLE_TENSOR)

    def _is_floating(self, expr: cst.BaseExpression, order: int, depth: int = 0) -> bool:
        """``expr`` is a floating tensor by construction (a mean, a cast, a model's loss), not maybe an integer count."""
        if depth > 6:
            return False
        if isinstance(expr, cst.Call):
            method = _method_or_function(expr)
            if method in FLOATING_RESULTS:
                return True
            if method in ELEMENTWISE - {"to", "abs", "neg", "clamp"} or method in ("detach", "clone", "squeeze"):
                inner = expr.func.value if isinstance(expr.func, cst.Attribute) else None
                return inner is not None and self._is_floating(inner, order, depth + 1)
            return False
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(expr.operator, cst.Divide) or (
                self._is_floating(expr.left, order, depth + 1) or self._is_floating(expr.right, order, depth + 1)
            )
        if isinstance(expr, cst.Float):
            return True
        if isinstance(expr, cst.Attribute) and expr.attr.value in FLOATING_OUTPUTS:
            return True
        if isinstance(expr, (cst.Name, cst.Attribute)):
            binding = self._lookup(dotted_name(expr) or "", order)
            return binding is not None and binding.value is not None and self._is_floating(binding.value, order, depth + 1)
        return False


def _site_for_reduction(call: cst.Call, method: str, arguments: Sequence[cst.Arg]) -> GatherSite:
    if arguments:
        # `x.mean(dim=1)`: a tensor per row, whose row count may differ per rank.
        return GatherSite(call, "mean", unsafe=GatherUnsafe.REDUCED_OVER_DIMENSION, unsafe_method=method)
    if method in COMPOSABLE_REDUCTIONS:
        return GatherSite(call, method)  # the sum of the ranks' sums is the global sum
    if method in ("mean", "nanmean"):
        return GatherSite(call, method)
    if method == "count_nonzero":
        return GatherSite(call, "sum")
    return GatherSite(call, "mean", unsafe=GatherUnsafe.SPREAD_STATISTIC, unsafe_method=method)


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
        self._relative_imports, self._self_attributes, self._calls_by_name, self._handed_on = _module_facts(
            source.module, frozenset(self.functions), methods
        )
        self.flows: dict[int, RankFlow] = {}
        self._returns: dict[str, bool] = {}
        self._unknown: dict[str, bool] = {}
        self._called: dict[int, ProjectReturns | None] = {}
        self._bases: dict[int, list[Definition]] = {}
        self._passed: dict[tuple[int, str], Rank | None] = {}
        self._reduced: dict[int, list[int]] = {}  # a function of this file -> reduced_parameters
        self._argument_free: dict[int, RankFlow] = {}  # a function -> its flow, every argument per-rank

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
        ``_compute_advantages(samples, gathered_rewards)``), NO_DATA when some hand it no data
        (a dict that starts empty, what a step the file cannot follow returns), as the value
        would read inline. Else None: a parameter named like data is then taken as this rank's.
        So it is when a call hands it what an unknown call made of this rank's data
        (``self.reward_model(**inputs)``: unknown, so no proof against the name), or in a lambda
        or a comprehension something short of a gathered value, when the function is also handed
        on as a value (a callback the file does not call itself), and when the
        function is never called here (recursive calls aside), is called through ``*args``, or
        is defined twice: its callers, not its name, are what the linter cannot see."""
        key = (id(function), name)
        if key in self._passed:
            return self._passed[key]
        self._passed[key] = None  # a recursive call reads as unknown
        found = self._call_sites(function)
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        shift = 1 if id(function) in self._class_of and positional[:1] in (["self"], ["cls"]) else 0
        states: list[Rank] = []
        for call, scope, statement, in_binder in found:
            if scope is function:
                continue  # a recursive call hands on what the parameter already holds: no evidence
            argument_node = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if argument_node is None and name in positional:
                plain = [a for a in call.args if a.keyword is None]
                index = positional.index(name) - shift
                if any(a.star for a in plain[: index + 1]) or not 0 <= index < len(plain):
                    return None
                argument_node = plain[index]
            if argument_node is None:
                return None
            caller = self.flow(scope)
            state = caller.state(argument_node.value, statement)
            if state == Rank.PER_RANK or (
                state == Rank.NO_DATA and (in_binder or caller.depends_on_rank(argument_node.value, statement))
            ):
                # What an unknown call made of this rank's data (`self.reward_model(**inputs)`)
                # may be this rank's: it does not contradict the parameter's name.
                return None
            states.append(state)
        result = max(states) if states else None
        self._passed[key] = result
        return result

    def _call_sites(
        self, function: cst.FunctionDef
    ) -> list[tuple[cst.Call, cst.FunctionDef | cst.Module, cst.CSTNode | None, bool]]:
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
        sites: list[tuple[cst.Call, cst.FunctionDef | cst.Module, cst.CSTNode | None, bool]] = []
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
        if (not rest and head in self.functions) or (
            head not in self.imports.aliases and head not in self._relative_imports
        ):
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
        gate = _NAMES_AN_IN_PLACE_COLLECTIVE
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


def _order_of(entry: tuple[int, Binding]) -> int:
    return entry[0]


# Lazy bindings worked out one inside another before the earlier ones are worked out in order.
_LAZY_DEPTH = 24


def _wider(body: Binding, other: Binding) -> tuple[Rank, Binding]:
    """After ``if``/``else``: the state either arm's binding may hold, and the arm that holds it."""
    return max(body.state, other.state), (body if body.state >= other.state else other)


def _data_parts(call: cst.Call) -> list[cst.CSTNode]:
    """What a call's result is computed from: its arguments and its receiver. Where the result is
    placed is not what it holds (`model.cuda(local_rank)`, `DistributedDataParallel(model,
    device_ids=[local_rank])`: the same model on every rank)."""
    parts: list[cst.CSTNode] = [
        arg.value for arg in call.args if arg.keyword is None or arg.keyword.value not in PLACEMENT_KEYWORDS
    ]
    if isinstance(call.func, cst.Attribute):
        if call.func.attr.value in PLACEMENT_METHODS:
            parts = []
        parts.append(call.func.value)
    return parts


def _is_own_function_call(call: cst.Call) -> bool:
    """``helper(x)`` or ``self.helper(x)``: a call that may land on a function of this file."""
    if isinstance(call.func, cst.Name):
        return True
    return isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) in ("self", "cls")


def _is_torch_distributed(name: str | None) -> bool:
    # `dist.all_reduce(t)`, `torch.distributed.all_reduce(t)`: the usual spellings.
    return name is not None and (name.startswith("torch.distributed.") or name.split(".")[0] == "dist")


def _method_or_function(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    if isinstance(call.func, cst.Name):
        return call.func.value
    return None


def _may_hold_python_number(value: cst.BaseExpression) -> bool:
    """A value that may be a Python number rather than a tensor: built with ``.item()``,
    ``.tolist()``, ``int()``/``float()``/``round()``/``max()``/``min()``/``len()``, or integer arithmetic on such."""
    if isinstance(value, cst.Call):
        method = _method_or_function(value)
        if isinstance(value.func, cst.Name) and method in ("int", "float", "round", "max", "min", "len", "sum", "abs"):
            return True
        if method in ("item", "tolist"):
            return True
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
        return any(_may_hold_python_number(child) for child in syntax_children(value) if isinstance(child, cst.BaseExpression))
    return False


def _is_python_number(value: cst.BaseExpression | None) -> TypeGuard[cst.Call]:
    if not isinstance(value, cst.Call):
        return False
    method = _method_or_function(value)
    return (isinstance(value.func, cst.Attribute) and method in ("item", "tolist")) or (
        isinstance(value.func, cst.Name) and method == "float"
    )


def names_in(node: cst.CSTNode) -> list[str]:
    """Every name and attribute name read in ``node`` (``a.b[c]`` -> ``a``, ``b``, ``c``)."""
    found: list[str] = []
    if isinstance(node, cst.Name):
        found.append(node.value)
    elif isinstance(node, cst.Attribute):
        found.append(node.attr.value)
    for child in syntax_children(node):
        found.extend(names_in(child))
    return found


def _module_facts(
    module: cst.Module, functions: frozenset[str], methods: frozenset[str]
) -> tuple[frozenset[str], frozenset[str], dict[str, list[cst.Call]], frozenset[str]]:
    """In one walk of the file: the names ``from .utils import helper`` binds (another module of
    the same project), the ``self.x`` names assigned anywhere (``self.model = model``), the
    calls by the name they call (``f(...)``, ``self.f(...)``), and the names of ``functions``
    read as a value (``Trainer(compute_metrics=log_metrics)``, ``map(self.summarize, batches)``):
    functions whose callers the file does not all show. Not read as a value: a callee, a
    definition's, a parameter's or a keyword argument's name, a name assigned to, and an
    attribute of anything but ``self`` or ``cls`` unless a method has its name (``args.default``
    is no function ``default`` of this file). ``methods``: the names of ``functions`` some
    class defines."""
    facts = _ModuleFacts(functions, methods)
    walk.visit(module, facts)
    return frozenset(facts.relative), frozenset(facts.assigned), facts.calls, frozenset(facts.handed_on)


class _ModuleFacts(cst.CSTVisitor):
    """``_module_facts``' walk. A class of the module, not one made per call: that is a reference
    cycle, which would hold the file's calls (and their trees) until the collector runs."""

    def __init__(self, functions: frozenset[str], methods: frozenset[str]) -> None:
        super().__init__()
        self.functions = functions
        self.methods = methods
        self.relative: set[str] = set()
        self.assigned: set[str] = set()
        self.calls: dict[str, list[cst.Call]] = {}
        self.handed_on: set[str] = set()
        self.not_a_value: set[int] = set()  # callees and definitions' names: the ids of their Name nodes

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.relative.add(dotted_name(alias.asname.name if alias.asname else alias.name) or "")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.assigned.update(n for n in assigned_names(target.target) if n.startswith("self."))
            self._not_values(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.assigned.update(n for n in assigned_names(node.target) if n.startswith("self."))
        self._not_values(node.target)

    def _not_values(self, target: cst.BaseExpression) -> None:
        """The names an assignment binds (``x = ...``, ``a, *b = ...``) are not read."""
        if isinstance(target, cst.Name):
            self.not_a_value.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._not_values(element.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_a_value.add(id(node.keyword))

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> None:  # `case Event(step=1)`
        self.not_a_value.add(id(node.key))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_a_value.add(id(node.name))

    def visit_TypeVar(self, node: cst.TypeVar) -> None:  # `def f[T = int]()` binds T
        self.not_a_value.add(id(node.name))

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:  # `type Batch = dict` binds Batch
        self.not_a_value.add(id(node.name))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # `dotted_name(node.value) in ("self", "cls")`, without spelling out every receiver.
        receiver = node.value
        if node.attr.value not in self.methods and not (type(receiver) is cst.Name and receiver.value in ("self", "cls")):
            self.not_a_value.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        name = _method_or_function(node)
        if name is not None:
            self.calls.setdefault(name, []).append(node)
        self.not_a_value.add(id(node.func.attr if isinstance(node.func, cst.Attribute) else node.func))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.not_a_value.add(id(node.name))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.functions and id(node) not in self.not_a_value:
            self.handed_on.add(node.value)
