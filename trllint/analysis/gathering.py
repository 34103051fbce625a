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
from dataclasses import dataclass
from typing import Callable

import libcst as cst

from trllint.analysis.context import imports_of, is_trainer_class
from trllint.analysis.names import ImportMap, argument, assigned_names, call_name, dotted_name, last_attribute
from trllint.analysis.walk import syntax_children
from trllint.rule import Token
from trllint.source import SourceFile


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
COMPOSABLE_REDUCTIONS = frozenset({"sum", "nansum", "max", "min", "amax", "amin"})
# Element-wise or bookkeeping methods that commute with a gather along the batch dimension.
ELEMENTWISE = frozenset(
    {"detach", "float", "double", "half", "bfloat16", "to", "clone", "contiguous", "abs", "exp", "log", "neg",
     "sqrt", "sigmoid", "clamp", "squeeze"}
)
# Reads of shape or placement, not of data: the same kind of thing on every rank.
SHAPE_READS = frozenset({"size", "shape", "numel", "nelement", "dim", "ndim", "ndimension", "device", "dtype"})
NO_DATA_BUILTINS = frozenset({"len", "range", "isinstance", "hasattr", "type", "str", "repr", "print"})
RANK_INDEX = frozenset({"process_index", "local_process_index", "get_rank", "local_rank", "rank"})
# Parameter names that carry a batch or what the model made of it (compute_loss(model, inputs)).
DATA_PARAMETER_HINTS = (
    "batch", "input", "output", "logit", "logp", "loss", "label", "reward", "pred", "completion", "sample",
    "example", "target", "mask", "hidden", "embed",
)


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
    cached = source.facts.get("runs_distributed")
    if cached is None:
        imports = imports_of(source)
        cached = (
            imports.imports_any("accelerate", "torch.distributed", "deepspeed")
            or "torch.distributed." in source.text
            or any(isinstance(s, cst.ClassDef) and is_trainer_class(s) for s in source.module.body)
        )
        source.facts["runs_distributed"] = cached
    return cached


def is_gathering_call(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (_method_or_function(node) or "").lstrip("_") in GATHERING_CALLS


@dataclass(frozen=True)
class Binding:
    value: cst.BaseExpression | None  # None: bound by a loop, a `with`, a parameter or a collective
    state: Rank
    statement: cst.CSTNode
    plain: bool  # `name = value` with one target: rewriting `value` changes only this name


@dataclass(frozen=True)
class GatherSite:
    """Where a gather makes a logged value global: wrap ``tensor`` in the gather."""

    tensor: cst.BaseExpression
    # The reduction the fix appends to the gathered copy: `mean` where nothing reduced it (one value
    # per rank), `sum`/`max`/`min` where the rank's own total is gathered; None where one follows.
    reduce_after: str | None
    keeps_single_process_value: bool  # a reduction or `.item()` follows, so one process sees the same number


class RankFlow:
    """Per-rank or global, for the values of one function (or a module's top-level code)."""

    def __init__(
        self,
        scope: cst.FunctionDef | cst.Module,
        imports: ImportMap,
        returns_global: Callable[[str], bool] = lambda name: False,
    ) -> None:
        self.scope = scope
        self._imports = imports
        self._returns_global = returns_global
        self._order: dict[int, int] = {}
        self._bindings: dict[str, list[tuple[int, Binding]]] = {}
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
        facts = source.facts.get("rank_facts")
        if facts is None:
            facts = source.facts["rank_facts"] = _FileRankFacts(source)
        return facts.flow(scope)

    # ---- questions ----------------------------------------------------------------------

    def state(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> Rank:
        """Per-rank, global or no data, for ``expr`` evaluated in statement ``at``."""
        return self._state(expr, self._order.get(id(at), len(self._order) + 1))

    def binding(self, name: str, at: cst.CSTNode | None) -> Binding | None:
        """The assignment of ``name`` that statement ``at`` reads."""
        return self._lookup(name, self._order.get(id(at), len(self._order) + 1))

    def gather_sites(self, expr: cst.BaseExpression, at: cst.CSTNode | None) -> list[GatherSite]:
        """Where to gather so that the per-rank tensors in ``expr`` become global (may be empty)."""
        sites: dict[int, GatherSite] = {}
        self._collect_sites(expr, at, sites, depth=0)
        if any(site is None for site in sites.values()):
            return []
        return list(sites.values())  # type: ignore[arg-type]

    # ---- building the flow ----------------------------------------------------------------

    def _bind_parameters(self, function: cst.FunctionDef) -> None:
        self._order[id(function)] = 0
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            name = param.name.value
            per_rank = param.default is None and any(hint in name.lower() for hint in DATA_PARAMETER_HINTS)
            self._bind(name, Binding(None, Rank.PER_RANK if per_rank else Rank.NO_DATA, function, False), 0)

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
                    for name in assigned_names(item.asname.name):
                        self._bind(name, Binding(None, self._state(item.item, order), statement, False), order)
        self._walk(getattr(statement, "body", None))
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self._walk(case.body)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            for handler in statement.handlers:
                self._walk(handler.body)
            if statement.finalbody is not None:
                self._walk(statement.finalbody.body)
        orelse = getattr(statement, "orelse", None)
        while orelse is not None:
            self._walk(orelse.body)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None

    def _simple(self, small: cst.BaseSmallStatement, line: cst.CSTNode, order: int) -> None:
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            plain = len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Attribute))
            for target in targets:
                self._bind_target(target, small.value, line, order, plain)
        elif isinstance(small, cst.AugAssign):
            name = dotted_name(small.target)
            if name is not None:
                joined = max(self._state(small.target, order), self._state(small.value, order))
                self._bind(name, Binding(small.value, joined, line, False), order)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            self._bind_collective_output(small.value, line, order)

    def _bind_target(self, target, value, line, order: int, plain: bool) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements):
                for t, v in zip(target.elements, value.elements):
                    self._bind_target(t.value, v.value, line, order, False)
                return
        state = self._state(value, order)
        for name in assigned_names(target):
            self._bind(name, Binding(value, state, line, plain), order)

    def _bind_loop_target(self, target, iterable, statement, order: int) -> None:
        function = call_name(iterable) if isinstance(iterable, cst.Call) else None
        if function in ("enumerate", "zip") and isinstance(target, (cst.Tuple, cst.List)):
            parts = [a.value for a in iterable.args]
            if function == "enumerate":
                parts = [cst.Integer("0"), parts[0]] if parts else []
            if len(parts) == len(target.elements):
                for element, part in zip(target.elements, parts):
                    self._bind_loop_target(element.value, part, statement, order)
                return
        state = self._iterable_state(iterable, order)
        for name in assigned_names(target):
            self._bind(name, Binding(None, state, statement, False), order)

    def _iterable_state(self, iterable: cst.BaseExpression, order: int) -> Rank:
        # Each rank iterates its own shard of a (prepared) data loader.
        for node in _names_in(iterable):
            if "loader" in node.lower():
                return Rank.PER_RANK
        return self._state(iterable, order)

    def _bind_collective_output(self, call: cst.Call, line, order: int) -> None:
        full = self._imports.resolve(call_name(call))
        method = last_attribute(full)
        if method not in IN_PLACE_COLLECTIVES or not _is_torch_distributed(full):
            return
        output = argument(call, *IN_PLACE_COLLECTIVES[method])
        name = dotted_name(output.value) if output is not None else None
        if name is not None:
            self._bind(name, Binding(None, Rank.GLOBAL, line, False), order)

    def _bind(self, name: str, binding: Binding, order: int) -> None:
        self._bindings.setdefault(name, []).append((order, binding))

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
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            binding = self._lookup(name, order) if name else None
            if binding is not None:
                return binding.state
            if isinstance(node, cst.Attribute):
                if node.attr.value in SHAPE_READS:
                    return Rank.NO_DATA
                if node.attr.value in RANK_INDEX:
                    return Rank.PER_RANK
                return self._state(node.value, order)
            return Rank.NO_DATA
        if isinstance(node, cst.Call):
            method = _method_or_function(node) or ""
            if method.lstrip("_") in GATHERING_CALLS:
                return Rank.GLOBAL
            if method in RANK_INDEX:
                return Rank.PER_RANK
            if _is_own_function_call(node) and self._returns_global(method):
                return Rank.GLOBAL
            if method in SHAPE_READS or (isinstance(node.func, cst.Name) and method in NO_DATA_BUILTINS):
                return Rank.NO_DATA
            parts = [arg.value for arg in node.args]
            if isinstance(node.func, cst.Attribute):
                parts.append(node.func.value)
            return max((self._state(p, order) for p in parts), default=Rank.NO_DATA)
        if isinstance(node, (cst.Lambda, cst.BaseString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)):
            return Rank.NO_DATA
        if isinstance(node, cst.Arg):
            return self._state(node.value, order)
        if isinstance(node, cst.CompFor):
            parts = [node.iter, *(c.test for c in node.ifs)]
            if node.inner_for_in is not None:
                parts.append(node.inner_for_in)
            return max((self._state(p, order) for p in parts), default=Rank.NO_DATA)
        # Operators, displays, subscripts, comprehensions: what their parts hold.
        return max((self._state(child, order) for child in syntax_children(node)), default=Rank.NO_DATA)

    # ---- where to gather ----------------------------------------------------------------

    def _collect_sites(self, expr, at, sites: dict[int, GatherSite], depth: int) -> None:
        order = self._order.get(id(at), len(self._order) + 1)
        if depth > 8 or self._state(expr, order) != Rank.PER_RANK:
            return
        # Peel what is applied after the last reduction: conversions to Python or the CPU (the
        # gather must come before them: NCCL gathers device tensors) and element-wise methods.
        node, below_conversion, peeled, converted = expr, expr, False, False
        while isinstance(node, cst.Call):
            method = _method_or_function(node)
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            first = node.args[0].value if node.args else None
            if receiver is not None and dotted_name(receiver) == "torch":
                if method not in REDUCTIONS or first is None:
                    break
                target = first  # torch.mean(x)
            elif receiver is not None and method in REDUCTIONS:
                target = receiver
            elif receiver is not None and (method in CONVERSIONS or method in ELEMENTWISE):
                if method in CONVERSIONS:
                    below_conversion, converted = receiver, converted or method == "item"
                node, peeled = receiver, True
                continue
            elif isinstance(node.func, cst.Name) and method == "float" and len(node.args) == 1:
                node = below_conversion = first
                peeled = converted = True
                continue
            else:
                break
            if self._state(target, order) != Rank.PER_RANK:
                return
            if method in COMPOSABLE_REDUCTIONS and target is receiver and not node.args:
                sites[id(node)] = GatherSite(node, reduce_after=method, keeps_single_process_value=True)
            else:
                sites[id(target)] = GatherSite(target, reduce_after=None, keeps_single_process_value=True)
            return
        if peeled:
            # A tensor turned into a number with no reduction: gather, then reduce the copy.
            sites[id(below_conversion)] = GatherSite(
                below_conversion, reduce_after="mean", keeps_single_process_value=converted
            )
            return
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
                numerator: dict[int, GatherSite] = {}
                self._collect_sites(node.left, at, numerator, depth + 1)
                if any(site and site.reduce_after in COMPOSABLE_REDUCTIONS for site in numerator.values()):
                    # `correct.sum().item() / len(labels)`: the ranks' summed count over this rank's
                    # size is no mean at all; which denominator is meant is for a human to say.
                    sites[id(node)] = None  # type: ignore[assignment]
                    return
            for child in syntax_children(node):
                if isinstance(child, cst.BaseExpression):
                    self._collect_sites(child, at, sites, depth + 1)
                elif isinstance(child, cst.ComparisonTarget):
                    self._collect_sites(child.comparator, at, sites, depth + 1)
            return
        if isinstance(node, (cst.Name, cst.Attribute)):
            binding = self.binding(dotted_name(node) or "", at)
            if binding is not None and binding.plain and _is_python_number(binding.value):
                # `length = mask.sum(1).float().mean().item()`: only the assignment can gather it.
                self._collect_sites(binding.value, binding.statement, sites, depth + 1)
                return
        if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
            sites[id(node)] = GatherSite(node, reduce_after="mean", keeps_single_process_value=False)


class _FileRankFacts:
    """One file's flows, and which of its functions return a gathered value."""

    def __init__(self, source: SourceFile) -> None:
        self.imports = imports_of(source)
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self._index(source.module)
        self.flows: dict[int, RankFlow] = {}
        self._returns: dict[str, bool] = {}

    def _index(self, block: cst.CSTNode | None) -> None:
        for statement in getattr(block, "body", ()):
            if isinstance(statement, cst.FunctionDef):
                self.functions.setdefault(statement.name.value, []).append(statement)
            if isinstance(statement, cst.BaseCompoundStatement):
                self._index(getattr(statement, "body", None))

    def flow(self, scope: cst.FunctionDef | cst.Module) -> RankFlow:
        if id(scope) not in self.flows:
            self.flows[id(scope)] = RankFlow(scope, self.imports, self.returns_global)
        return self.flows[id(scope)]

    def returns_global(self, name: str) -> bool:
        if name not in self._returns:
            self._returns[name] = False  # a recursive call reads as not global
            functions = self.functions.get(name, ())
            self._returns[name] = bool(functions) and all(self._return_state(f) == Rank.GLOBAL for f in functions)
        return self._returns[name]

    def _return_state(self, function: cst.FunctionDef) -> Rank:
        flow = self.flow(function)
        states = [
            flow.state(small.value, line)
            for small, line in flow.statements
            if isinstance(small, cst.Return) and small.value is not None
        ]
        return min(states, default=Rank.NO_DATA)


def _order_of(entry: tuple[int, Binding]) -> int:
    return entry[0]


def _is_own_function_call(call: cst.Call) -> bool:
    """``helper(x)`` or ``self.helper(x)``: a call that may land on a function of this file."""
    if isinstance(call.func, cst.Name):
        return True
    return isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) in ("self", "cls")


def _is_torch_distributed(name: str | None) -> bool:
    # `dist.all_reduce(t)`, `torch.distributed.all_reduce(t)`: the usual spellings.
    return bool(name) and (name.startswith("torch.distributed.") or name.split(".")[0] == "dist")


def _method_or_function(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    if isinstance(call.func, cst.Name):
        return call.func.value
    return None


def _is_python_number(value: cst.BaseExpression | None) -> bool:
    if not isinstance(value, cst.Call):
        return False
    method = _method_or_function(value)
    return (isinstance(value.func, cst.Attribute) and method in ("item", "tolist")) or (
        isinstance(value.func, cst.Name) and method == "float"
    )


def _names_in(node: cst.CSTNode) -> list[str]:
    found: list[str] = []
    if isinstance(node, cst.Name):
        found.append(node.value)
    elif isinstance(node, cst.Attribute):
        found.append(node.attr.value)
    for child in syntax_children(node):
        found.extend(_names_in(child))
    return found
