"""Where a gather makes a logged value global: the sites TRL004's fix wraps in a gather.

A per-rank value (``RankFlow``) logged on one rank is gathered where it is still a tensor: below
its conversions to Python or the CPU (NCCL gathers device tensors), and after its last reduction
on the rank, so that tensors padded to a different length on each rank never meet in one gather.
"""

from __future__ import annotations

from typing import Sequence, TypeGuard

import libcst as cst

from dataclasses import dataclass
from trllint.core.cst.names import dotted_name
from trllint.core.cst.walk import syntax_children
from trllint.core.findings import ReasonKind
from trllint.facts.rank_lattice import Rank, method_or_function
from trllint.facts.scope_flow import RankFlow

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


class GatherUnsafe(ReasonKind):
    """Why gathering at a site may fail or change a number; ``{method}`` is the reduction."""

    WHOLE_TENSOR = (
        "the logged value is a whole tensor with no reduction: its shape may differ per rank, and the "
        "fix logs its mean over the ranks instead"
    )
    REDUCED_OVER_DIMENSION = "{method}(...) over a dimension leaves a tensor whose shape may differ per rank"
    SPREAD_STATISTIC = "the mean of the ranks' {method}() is not the {method}() over all ranks"


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


def gather_sites(flow: RankFlow, expr: cst.BaseExpression, at: cst.CSTNode | None) -> list[GatherSite]:
    """Where to gather so that the per-rank tensors in ``expr``, read in statement ``at`` of
    ``flow``'s scope, become global (may be empty)."""
    sites: dict[int, GatherSite | None] = {}  # None: a per-rank part with no tensor to gather
    _collect_sites(flow, expr, at, sites, depth=0)
    found = [site for site in sites.values() if site is not None]
    return found if len(found) == len(sites) else []


def _collect_sites(
    flow: RankFlow, expr: cst.BaseExpression, at: cst.CSTNode | None, sites: dict[int, GatherSite | None], depth: int
) -> None:
    if depth > 8 or flow.state(expr, at) != Rank.PER_RANK:
        return
    # Peel what is applied after the last reduction: conversions to Python or the CPU (the
    # gather must come before them: NCCL gathers device tensors) and element-wise methods.
    node, below_conversion, peeled, one_element = expr, expr, False, False
    while isinstance(node, cst.Call):
        method = method_or_function(node)
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
        if flow.state(target, at) != Rank.PER_RANK:
            return
        # Reduce on the rank first and gather the rank's 0-d result: the ranks' tensors may
        # differ in shape (per-rank padding, masks), a 0-d result never does.
        sites[id(node)] = _site_for_reduction(node, method or "", reduce_arguments)
        return
    if peeled and one_element:
        # `loss.item()`: one element on every rank; gathered, then averaged over the ranks.
        statistic = method_or_function(below_conversion) if isinstance(below_conversion, cst.Call) else None
        spread = statistic in SPREAD_STATISTICS
        sites[id(below_conversion)] = GatherSite(
            below_conversion,
            "mean",
            not _is_floating(flow, below_conversion, at),
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
            _collect_sites(flow, node.left, at, numerator, depth + 1)
            if any(site and site.reduce_after in COMPOSABLE_REDUCTIONS for site in numerator.values()):
                # `correct.sum().item() / len(labels)`: the ranks' summed count over this rank's
                # size is no mean at all; which denominator is meant is for a human to say.
                sites[id(node)] = None
                return
        for child in syntax_children(node):
            if isinstance(child, cst.BaseExpression):
                _collect_sites(flow, child, at, sites, depth + 1)
            elif isinstance(child, cst.ComparisonTarget):
                _collect_sites(flow, child.comparator, at, sites, depth + 1)
        return
    if isinstance(node, (cst.Name, cst.Attribute)):
        binding = flow.binding(dotted_name(node) or "", at)
        if binding is not None and _is_python_number(binding.value):
            if binding.plain:
                # `length = mask.sum(1).float().mean().item()`: only the assignment can gather it.
                _collect_sites(flow, binding.value, binding.statement, sites, depth + 1)
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

def _is_floating(flow: RankFlow, expr: cst.BaseExpression, at: cst.CSTNode | None, depth: int = 0) -> bool:
    """``expr`` is a floating tensor by construction (a mean, a cast, a model's loss), not maybe an integer count."""
    if depth > 6:
        return False
    if isinstance(expr, cst.Call):
        method = method_or_function(expr)
        if method in FLOATING_RESULTS:
            return True
        if method in ELEMENTWISE - {"to", "abs", "neg", "clamp"} or method in ("detach", "clone", "squeeze"):
            inner = expr.func.value if isinstance(expr.func, cst.Attribute) else None
            return inner is not None and _is_floating(flow, inner, at, depth + 1)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return isinstance(expr.operator, cst.Divide) or (
            _is_floating(flow, expr.left, at, depth + 1) or _is_floating(flow, expr.right, at, depth + 1)
        )
    if isinstance(expr, cst.Float):
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value in FLOATING_OUTPUTS:
        return True
    if isinstance(expr, (cst.Name, cst.Attribute)):
        binding = flow.binding(dotted_name(expr) or "", at)
        return binding is not None and binding.value is not None and _is_floating(flow, binding.value, at, depth + 1)
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


def _may_hold_python_number(value: cst.BaseExpression) -> bool:
    """A value that may be a Python number rather than a tensor: built with ``.item()``,
    ``.tolist()``, ``int()``/``float()``/``round()``/``max()``/``min()``/``len()``, or integer arithmetic on such."""
    if isinstance(value, cst.Call):
        method = method_or_function(value)
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
    method = method_or_function(value)
    return (isinstance(value.func, cst.Attribute) and method in ("item", "tolist")) or (
        isinstance(value.func, cst.Name) and method == "float"
    )
