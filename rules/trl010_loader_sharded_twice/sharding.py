"""Which loaders, samplers and datasets already hold this rank's shard only (TRL010's fact).

A loader is sharded by rank when its ``sampler`` (or ``batch_sampler``) is a
``DistributedSampler`` (torch's, or a class of the same family: ``Distributed*Sampler``), or when
its dataset was cut by rank: ``dataset.shard(num_shards=n, index=rank)``,
``split_dataset_by_node(dataset, rank=..., world_size=...)``, ``dataset[rank::world_size]``.
Names are followed to the assignment the reading statement sees (``trllint.facts.bindings``); a
value the code does not spell (a helper's result, a loop variable) is unknown and says nothing.
"""

from __future__ import annotations

import re

import libcst as cst

from trllint.core.cst.names import argument, call_name, dotted_name, last_attribute, matches
from dataclasses import dataclass
from trllint.facts.bindings import bound_value
from trllint.facts.rank_lattice import DATA_LOADERS, LOADER_ARGUMENTS
from trllint.facts.ranks import reads_rank
from trllint.semantic.model import SemanticModel

TORCH_SAMPLER = ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler")
# torch's DistributedSampler and its kin (DistributedBucketSampler, DistributedWeightedSampler...):
# each picks this rank's indexes from num_replicas / rank.
_DISTRIBUTED_SAMPLER = re.compile(r"^Distributed\w*Sampler$")
# Tests that tell a distributed run from one process as accelerate sets it up (`DistributedSampler(d)
# if accelerator.num_processes > 1 else None`): the sampler arm is the one every multi-process run
# takes. Not a user's flag (`args.distributed`, `args.ddp`) nor `args.local_rank != -1`, which
# `accelerate launch` leaves at its default unless the script reads LOCAL_RANK itself.
_DISTRIBUTED_RUN_WORDS = (
    "num_processes", "world_size", "is_initialized", "distributed_type", "get_world_size"
)
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Sharding:
    """Where a loader's data is cut by rank."""

    how: str  # "sampler", "batch_sampler" or "dataset"
    node: cst.BaseExpression  # the sampler's or dataset's expression as the loader is given it
    made_by: cst.BaseExpression  # the call (or subscript) that cuts by rank
    loader: cst.Call | None  # the DataLoader(...) call that takes it
    argument: cst.Arg | None  # the loader's sampler= / dataset argument

    @property
    def torch_sampler(self) -> bool:
        return self.how == "sampler" and isinstance(self.made_by, cst.Call)


class ShardingFacts:
    """The questions about one file, with the file's model and imports."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self.imports = model.imports

    # ---- loaders ----------------------------------------------------------------------------

    def loader_sharding(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> Sharding | None:
        """How the loader ``expr`` (read at ``at``) is already sharded by rank, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            bound = self._bound(expr, at)
            return self.loader_sharding(bound[0], bound[1], depth + 1) if bound else None
        if not isinstance(expr, cst.Call) or last_attribute(call_name(expr)) not in DATA_LOADERS:
            return None
        for how in ("sampler", "batch_sampler"):
            arg = argument(expr, how, LOADER_ARGUMENTS[how])
            if arg is None:
                continue
            made_by = self.sampler_by_rank(arg.value, expr, depth + 1)
            if made_by is not None:
                return Sharding(how, arg.value, made_by, expr, arg)
        arg = argument(expr, "dataset", LOADER_ARGUMENTS["dataset"])
        if arg is not None:
            made_by = self.dataset_by_rank(arg.value, expr, depth + 1)
            if made_by is not None:
                return Sharding("dataset", arg.value, made_by, expr, arg)
        return None

    # ---- samplers -----------------------------------------------------------------------------

    def sampler_by_rank(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> cst.Call | None:
        """The ``Distributed*Sampler(...)`` call ``expr`` holds, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            bound = self._bound(expr, at)
            return self.sampler_by_rank(bound[0], bound[1], depth + 1) if bound else None
        if isinstance(expr, cst.IfExp) and self._tests_distributed_run(expr.test):
            for arm in (expr.body, expr.orelse):
                found = self.sampler_by_rank(arm, at, depth + 1)
                if found is not None:
                    return found
            return None
        if not isinstance(expr, cst.Call):
            return None
        full = self.imports.resolve(call_name(expr)) or call_name(expr) or ""
        if not _DISTRIBUTED_SAMPLER.match(full.rsplit(".", 1)[-1]):
            return None
        replicas = argument(expr, "num_replicas", 1)
        if replicas is not None and isinstance(replicas.value, cst.Integer) and replicas.value.evaluated_value == 1:
            return None  # one replica: the sampler keeps the whole set
        return expr

    def is_torch_sampler(self, call: cst.Call) -> bool:
        full = self.imports.resolve(call_name(call)) or call_name(call)
        return matches(full, *TORCH_SAMPLER) or (full == "DistributedSampler" and "DistributedSampler" not in self._defined())

    # ---- datasets -------------------------------------------------------------------------------

    def dataset_by_rank(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> cst.BaseExpression | None:
        """The call or subscript that cuts the dataset ``expr`` by rank, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            bound = self._bound(expr, at)
            return self.dataset_by_rank(bound[0], bound[1], depth + 1) if bound else None
        if isinstance(expr, cst.Call):
            method = last_attribute(call_name(expr)) if call_name(expr) else (
                expr.func.attr.value if isinstance(expr.func, cst.Attribute) else None
            )
            if method == "split_dataset_by_node":
                rank = argument(expr, "rank", 1)
                return expr if rank is not None and reads_rank(self.model, rank.value) else None
            if method == "shard" and isinstance(expr.func, cst.Attribute):
                index = argument(expr, "index", 1)
                return expr if index is not None and reads_rank(self.model, index.value) else None
            return None
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
            part = expr.slice[0].slice
            # dataset[rank::world_size]: every world_size-th example from this rank's
            if isinstance(part, cst.Slice) and part.lower is not None and part.step is not None:
                return expr if reads_rank(self.model, part.lower) else None
        return None

    # ---- helpers ----------------------------------------------------------------------------------

    def _bound(self, expr: cst.BaseExpression, at: cst.CSTNode) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
        name = dotted_name(expr)
        if name is None:
            return None
        bound = bound_value(self.model, name, at)
        return (bound.value, bound.statement) if bound is not None else None

    def _tests_distributed_run(self, test: cst.BaseExpression) -> bool:
        text = self.model.source.module.code_for_node(test).lower()
        return any(word in text for word in _DISTRIBUTED_RUN_WORDS)

    def _defined(self) -> set[str]:
        return {c.name.value for c in self.model.definitions.classes}
