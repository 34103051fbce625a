"""Per-rank or global: the state of each value of one function, read in statement order.

``RankFlow`` evaluates an expression over the bindings of its scope (``ScopeBindings``): a
gather or a reduction makes a value global, this rank's batch, outputs or index make it per-rank,
and what the file or its project shows of a called function (the callbacks ``FileRankFlows``
hands in) decides a call's result. Unknown is silent: a call the linter cannot see holds no data.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from trllint.core.cst.names import ImportMap, argument, call_name, comprehension_parts, dotted_name, is_none, last_attribute
from trllint.core.cst.walk import syntax_children
from trllint.facts.rank_lattice import (
    CLOCKS,
    DATA_LOADERS,
    LOADER_ARGUMENTS,
    GATHERING_CALLS,
    NO_DATA_BUILTINS,
    SHAPE_READS,
    GLOBAL_PREFIX,
    MODULE_RETURNS_ITSELF,
    shards_the_data,
    Rank,
    data_parts,
    in_place_output,
    is_loss_function,
    is_model_forward,
    is_own_function_call,
    method_or_function,
    names_a_loader,
    names_in,
)
from trllint.facts.rank_reads import read_children
from trllint.facts.ranks import RANK_CONVERSIONS, RankFacts
from trllint.facts.scope_bindings import ScopeBindings


class RankFlow(ScopeBindings):
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
        builds_syncing_metric: Callable[[cst.Call], bool] = lambda call: False,
        syncs_its_object: Callable[[cst.Call, str], bool] = lambda built, method: False,
        handed_this_ranks_data: Callable[[cst.FunctionDef, str], bool] = lambda function, name: False,
    ) -> None:
        self._returned_element = returned_element
        self._builds_syncing_metric = builds_syncing_metric
        self._passed_to = passed_to
        self._handed_this_ranks_data = handed_this_ranks_data
        self._is_project_call = is_project_call
        self._returns_global = returns_global
        self._is_unknown_call = is_unknown_call
        self._is_global_call = is_global_call
        # The walk works out no state yet: every callback above is set before it runs.
        super().__init__(
            scope,
            imports,
            ranks if ranks is not None else RankFacts(cst.Module([])),
            reduced_arguments,
            arguments_per_rank,
            syncs_its_object,
        )

    # ---- questions ----------------------------------------------------------------------

    def state(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> Rank:
        """Per-rank, global or no data, for ``expr`` evaluated in statement ``at``."""
        return self._state(expr, self._order.get(id(at), len(self._order) + 1))

    def holds_the_rank(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> bool:
        """``expr`` is this process's rank itself, which rank it is and none of its data:
        ``accelerator.process_index``, ``dist.get_rank()``, ``int(os.environ["RANK"])``, a parameter
        named as a rank, or a name whose assignment reaching ``at`` binds one of those. A name
        spelled as a rank but assigned anything else (``rank = matrix_rank(emb).item()``) is not."""
        return self._holds_the_rank(expr, self._order.get(id(at), len(self._order) + 1), set())

    def _holds_the_rank(self, node: cst.CSTNode, order: int, followed: set[int]) -> bool:
        if isinstance(node, cst.Call) and call_name(node) in RANK_CONVERSIONS and len(node.args) == 1:
            return self._holds_the_rank(node.args[0].value, order, followed)
        if not self._ranks.is_rank_index(node):
            return False
        name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        found = self._lookup_entry(name, order) if name else None
        if found is None:
            return True  # a rank read as spelled (`dist.get_rank()`, `accelerator.process_index`)
        made, binding = found
        if binding.value is None:
            return isinstance(binding.statement, cst.FunctionDef)  # a parameter; not a join of two arms
        if id(binding) in followed:
            return False
        followed.add(id(binding))
        return self._holds_the_rank(binding.value, made, followed)

    def depends_on_rank(self, expr: cst.CSTNode, at: cst.CSTNode | None) -> bool:
        """``expr`` may differ per rank: it reads this rank's data, its size (``len(batch)``) or its index."""
        return self._depends_on_rank(expr, self._order.get(id(at), len(self._order) + 1), set())

    def _depends_on_rank(self, node: cst.CSTNode, order: int, followed: set[int]) -> bool:
        if isinstance(node, (cst.Name, cst.Attribute)):
            if self._state(node, order) == Rank.PER_RANK:
                return True
            found = self._lookup_entry(dotted_name(node) or "", order)
            if found is not None:
                made, binding = found
                if id(binding) in followed or binding.value is None:
                    return False
                followed.add(id(binding))  # each assignment is read once (`x = f(x)` loops)
                # Its value reads the names as they were where it was made, not where it is read.
                return self._depends_on_rank(binding.value, made, followed)
            return isinstance(node, cst.Attribute) and self._depends_on_rank(node.value, order, followed)
        if isinstance(node, cst.Call) and self._state(node, order) == Rank.GLOBAL:
            return False
        if isinstance(node, cst.Comparison) and self._ranks.agreed_by_every_rank(node):
            return False  # `local_rank != -1`: reads the rank, answered alike on every rank
        if isinstance(node, cst.Comparison) and self._loader_exhausted(node, order):
            return False  # the data runs out on every rank at the same step
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            first, inside, own = comprehension_parts(node)
            with self._hiding(own):
                inner = any(self._depends_on_rank(p, order, followed) for p in inside)
            return inner or self._depends_on_rank(first, order, followed)
        # Where a call places its result is not what it holds: `torch.load(path, map_location=device)`.
        return any(self._depends_on_rank(child, order, followed) for child in read_children(node))

    def state_of_name(self, name: str, at: cst.CSTNode | None) -> Rank:
        """Per-rank, global or no data, for the dotted name ``name`` read in statement ``at``."""
        return self.state(cst.parse_expression(name), at) if "." in name else self.state(cst.Name(name), at)

    # ---- evaluating an expression ------------------------------------------------------------

    def _data_parameter(self, function: cst.FunctionDef, name: str) -> Rank:
        # Named like data, so this rank's, unless the file's calls say what it holds.
        passed = self._passed_to(function, name)
        return passed if passed is not None else Rank.PER_RANK

    def _loader_parameter(self, function: cst.FunctionDef, name: str) -> Rank:
        # A loader is this rank's shard only where every call of the file shows it is one.
        return Rank.PER_RANK if self._handed_this_ranks_data(function, name) else Rank.NO_DATA

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
        return max((self._state(part, order) for part in data_parts(call)), default=Rank.NO_DATA)

    def _iterable_state(self, iterable: cst.BaseExpression, order: int) -> Rank:
        if any(_names_loaders(spelling) for spelling in self._spellings_of(iterable, order)):
            # `for name in sorted(val_loaders)`, `for name, loader in loaders.items()`: the loaders
            # (or their names) of a collection, the same on every rank; a loop over one of them
            # visits that rank's shard.
            return Rank.NO_DATA
        whole = self._unsharded_loader(iterable, order)
        if whole is not None:
            # Every rank reads the same examples in the same order: a rank's own data only where
            # the data set itself is cut by rank (`dataset.shard(num_shards=n, index=rank)`).
            loader, built_at = whole
            dataset = argument(loader, "dataset", LOADER_ARGUMENTS["dataset"])
            per_rank = dataset is not None and self._state(dataset.value, built_at) == Rank.PER_RANK
            return Rank.PER_RANK if per_rank else Rank.NO_DATA
        # Each rank iterates its own shard of a (prepared) data loader.
        if any(names_a_loader(name) for name in names_in(iterable)):
            return Rank.PER_RANK
        return self._state(iterable, order)

    def _state(self, node: cst.CSTNode, order: int) -> Rank:
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, (cst.Divide, cst.FloorDivide))
            and self._reads_clock(node.right, order, 0)
        ):
            return Rank.NO_DATA  # a rate over wall-clock time (see CLOCKS)
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
            method = method_or_function(node) or ""
            if isinstance(node.func, cst.Name):
                # `from lightly.utils.dist import gather as lightly_gather`: the function's own name
                method = last_attribute(self._imports.resolve(method)) or method
            if in_place_output(node, self._imports) is not None:
                return Rank.NO_DATA  # `handle = dist.all_reduce(t, async_op=True)`: the data is `t`
            if method.lstrip("_") in GATHERING_CALLS:
                return Rank.GLOBAL
            if method == "compute" and self._syncing_metric(node, order):
                return Rank.GLOBAL  # `metric.compute()` of a torchmetrics metric: synced across ranks
            if method.startswith(GLOBAL_PREFIX):
                return Rank.GLOBAL  # `global_num_tokens_in_batch(batch)`: counted over every rank
            if shards_the_data(node, method):
                return Rank.PER_RANK  # this rank's shard of the data set
            if self._ranks.is_rank_index(node) or self._ranks.is_rank_index(node.func):
                return Rank.PER_RANK  # `dist.get_rank()`, `os.environ.get("RANK")`, `self.rank()`
            if is_own_function_call(node) and self._returns_global(method):
                return Rank.GLOBAL
            if self._is_global_call(node):
                return Rank.GLOBAL  # a helper of another module of the project that reduces
            if self._is_unknown_call(node):
                # A method inherited from a library trainer or a helper of another module: it may
                # gather before it returns (GRPO's reward computation does). Unknown is silent,
                # but for a loss function or a model's forward called on this rank's data: what
                # it returns is this rank's (an unknown callee makes no data global).
                if (is_loss_function(method) or is_model_forward(node)) and any(self._state(p, order) == Rank.PER_RANK for p in data_parts(node)):
                    return Rank.PER_RANK
                return Rank.NO_DATA
            if method in SHAPE_READS or (isinstance(node.func, cst.Name) and method in NO_DATA_BUILTINS):
                return Rank.NO_DATA
            if isinstance(node.func, cst.Name) and method in ("next", "iter") and node.args:
                # `next(batches)`, `iter(loader)`: an element of what is iterated, as a `for` reads it.
                return self._iterable_state(node.args[0].value, order)
            parts = data_parts(node)
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
        if isinstance(node, cst.Subscript) and (reduced := self._reduced_element(node, order)) is not None:
            return reduced.state  # `dist.all_reduce(logs[key].detach())` then `logs[key] / world_size`
        if isinstance(node, cst.Comparison) and self._ranks.agreed_by_every_rank(node):
            return Rank.NO_DATA  # `local_rank != -1`: the same answer on every rank
        if isinstance(node, cst.Comparison) and self._loader_exhausted(node, order):
            return Rank.NO_DATA
        if isinstance(node, cst.IfExp) and self._ranks.only_rank_tests(node.test):
            # `ModelEMA(model) if RANK in {-1, 0} else None`: the rank test picks which object a
            # rank holds, and neither arm is this rank's data (an arm that is, or the rank, still counts).
            return max(self._state(node.body, order), self._state(node.orelse, order))
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            # `{k: v for k, v in zip(keys, values)}`: its `k` is not the scope's `k`; what it
            # holds comes from what it iterates.
            first, inside, own = comprehension_parts(node)
            with self._hiding(own):
                inner = max((self._state(p, order) for p in inside), default=Rank.NO_DATA)
            return max(self._state(first, order), inner)
        # Operators, displays, subscripts, comprehensions: what their parts hold.
        return max((self._state(child, order) for child in syntax_children(node)), default=Rank.NO_DATA)

    def _syncing_metric(self, call: cst.Call, order: int) -> bool:
        """``call`` is ``metric.compute()`` on a name bound here to a metric object that syncs its
        states across ranks (``metric = MeanMetric().to(device)``: see ``SYNCING_METRIC_LIBRARIES``)."""
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        binding = self._lookup(dotted_name(receiver) or "", order)
        built = binding.value if binding is not None else None
        while isinstance(built, cst.Call) and isinstance(built.func, cst.Attribute) and built.func.attr.value in MODULE_RETURNS_ITSELF:
            built = built.func.value
        return isinstance(built, cst.Call) and self._builds_syncing_metric(built)

    def _unsharded_loader(self, iterable: cst.BaseExpression, order: int) -> tuple[cst.Call, int] | None:
        """The ``DataLoader(...)`` call the name ``iterable`` is bound to here, and the order of
        its statement, when it is given no sampler, no batch sampler and no shuffle
        (``DataLoader(valid_set, sampler=None)``): it reads its whole data set in order, the same
        on every rank. A loader prepared or wrapped after it is bound again, and is not this call."""
        binding = self._lookup(dotted_name(iterable) or "", order)
        loader = binding.value if binding is not None else None
        if binding is None or not isinstance(loader, cst.Call) or last_attribute(call_name(loader)) not in DATA_LOADERS:
            return None
        for keyword in ("shuffle", "sampler", "batch_sampler"):
            given = argument(loader, keyword, LOADER_ARGUMENTS[keyword])
            if given is not None and not (is_none(given.value) or (isinstance(given.value, cst.Name) and given.value.value == "False")):
                return None
        return loader, self._order.get(id(binding.statement), order)

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
            return self._imports.resolve(call_name(node)) in CLOCKS
        if isinstance(node, (cst.Name, cst.Attribute)):
            binding = self._lookup(dotted_name(node) or "", order)
            return binding is not None and binding.value is not None and self._reads_clock(binding.value, order, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Subtract, cst.Divide, cst.Multiply)):
            return self._reads_clock(node.left, order, depth + 1)  # `(time.time() - t0) / 60`, `... * 1000`
        return False


def _names_loaders(iterable: cst.BaseExpression) -> bool:
    """``iterable`` is a collection of data loaders, or its keys, values or items, by its name:
    ``val_loaders``, ``self.dataloaders.keys()``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
        if iterable.func.attr.value in ("keys", "values", "items"):
            iterable = iterable.func.value
    name = dotted_name(iterable)
    return name is not None and name.rpartition(".")[2].lower().endswith("loaders")
