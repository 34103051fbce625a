"""A value only some ranks evaluated, each over its own shard: ``if master_process: val_loss =
evaluate(model, val_loader)`` with a loader that hands each rank its shard. The other ranks'
shards are never evaluated, so what rank 0 logs is a fraction of the set, whatever it reduces.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.facts.rank_lattice import Rank, names_a_loader
from trllint.facts.rank_split import under_rank_split
from trllint.facts.scope_flow import RankFlow
from trllint.semantic.model import SemanticModel

from .metric_syntax import dotted_names_in


def evaluated_by_some_ranks(model: SemanticModel, flow: RankFlow, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """A per-rank name of ``value`` (read in statement ``at``) holds what a call over this rank's
    shard of a data loader returned under a test that lets only some ranks in."""
    for name in dotted_names_in(value):
        if flow.state_of_name(name, at) != Rank.PER_RANK:
            continue
        binding = flow.binding(name, at)
        if binding is None or binding.statement is None or not isinstance(binding.value, cst.Call):
            continue
        if not any(_is_sharded_loader(arg.value, binding.statement, flow) for arg in binding.value.args):
            continue
        if under_rank_split(model, binding.statement, flow.scope):
            return True
    return False


def _is_sharded_loader(expr: cst.BaseExpression, at: cst.CSTNode, flow: RankFlow) -> bool:
    """A data loader (by its name) that holds this rank's shard (built with a rank or a
    ``DistributedSampler``)."""
    name = dotted_name(expr)
    return name is not None and names_a_loader(name) and flow.state(expr, at) == Rank.PER_RANK
