"""A value reduced across ranks for the console while the per-rank one goes to the dashboard.

``reduced = loss.detach().clone(); dist.all_reduce(reduced)`` then ``print(reduced / world)`` and
``writer.add_scalar("loss", loss.item(), step)``: the code made the run's value and logged rank
0's. The copy is proven global by the rank flow, and proven a copy by reading the logged name.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.facts.rank_lattice import Rank
from trllint.facts.scope_flow import RankFlow

from .metric_syntax import dotted_names_in


def reduced_copy(flow: RankFlow, value: cst.BaseExpression, at: cst.CSTNode) -> str | None:
    """The name of a value, global where ``value`` is logged (statement ``at``), that an earlier
    statement of the scope made from one of ``value``'s per-rank names (``reduced_loss =
    reduce_mean(loss)``, or a copy all-reduced in place); None when there is none."""
    logged = {name for name in dotted_names_in(value) if flow.state_of_name(name, at) == Rank.PER_RANK}
    if not logged:
        return None
    copies: dict[str, bool] = {}  # name -> still the copy the scope made of a logged name
    for small, line in flow.statements:
        if line is at:
            break
        if not isinstance(small, cst.Assign):
            continue
        for target in small.targets:
            name = dotted_name(target.target)
            if name in logged:
                continue  # a logged name is never its own copy (and is left out below)
            if name is not None:
                # A later plain assignment rebinds it to something else; a collective writing
                # into it, or `copy /= world_size`, keeps it the copy.
                copies[name] = len(small.targets) == 1 and not logged.isdisjoint(_names_read(small.value))
    found = [name for name, copy in copies.items() if copy and name not in logged and not _carried_on(flow, name)]
    return next((name for name in found if flow.state_of_name(name, at) == Rank.GLOBAL), None)


def _carried_on(flow: RankFlow, name: str) -> bool:
    """Some statement of the scope computes another value from ``name`` (``train_loss +=
    avg_loss.item()``): the reduced copy may reach a sink that way, so it is not proven left out."""
    for small, _ in flow.statements:
        if isinstance(small, (cst.Assign, cst.AugAssign)) and small.value is not None:
            targets = small.targets if isinstance(small, cst.Assign) else []
            if any(dotted_name(t.target) == name for t in targets):
                continue  # the copy made (or remade) itself
            if name in _names_read(small.value):
                return True
    return False


def _names_read(node: cst.BaseExpression) -> set[str]:
    """The dotted names ``node`` reads, and every prefix of them (``outputs`` of ``outputs.loss``)."""
    names: set[str] = set()
    for name in dotted_names_in(node):
        parts = name.split(".")
        names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return names


def reduced_on_some_path(flow: RankFlow, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """A per-rank name of ``value`` is assigned a reduced value on some path before statement
    ``at`` (``x = mean(gather(x)) if distributed else x``, or an ``if``/``else`` whose one arm
    reduces): the other path is the one-process run, so the value is not proven this rank's."""
    logged = {name for name in dotted_names_in(value) if flow.state_of_name(name, at) == Rank.PER_RANK}
    for small, line in flow.statements:
        if line is at:
            return False
        if not isinstance(small, cst.Assign) or not any(dotted_name(t.target) in logged for t in small.targets):
            continue
        arms = [small.value.body, small.value.orelse] if isinstance(small.value, cst.IfExp) else [small.value]
        if any(_reduces(flow, arm, line) for arm in arms):
            return True
    return False


def _reduces(flow: RankFlow, arm: cst.BaseExpression, line: cst.CSTNode) -> bool:
    """``arm`` is reduced across ranks, or a call that takes this rank's data and returns what
    the flow cannot call this rank's (``mean(dist_gather(x))``, a helper that all-reduces where
    several processes run and returns its argument where one does)."""
    state = flow.state(arm, line)
    if state == Rank.GLOBAL:
        return True
    return isinstance(arm, cst.Call) and state != Rank.PER_RANK and any(
        flow.state_of_name(name, line) == Rank.PER_RANK for name in dotted_names_in(arm)
    )
