"""A value reduced across ranks for the console while the per-rank one goes to the dashboard.

``reduced = loss.detach().clone(); dist.all_reduce(reduced)`` then ``print(reduced / world)`` and
``writer.add_scalar("loss", loss.item(), step)``: the code made the run's value and logged rank
0's. The copy is proven global by the rank flow, and proven a copy by reading the logged name.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import dotted_name
from trllint.facts.rank_lattice import Rank
from trllint.facts.scope_flow import RankFlow

from .metric_syntax import dotted_names_in, dotted_reads


class ReducedCopy(NamedTuple):
    """A value's reduced copy: its name, and the logged per-rank name it was made from."""

    name: str
    source: str


def reduced_copy(flow: RankFlow, value: cst.BaseExpression, at: cst.CSTNode) -> ReducedCopy | None:
    """The value, global where ``value`` is logged (statement ``at``), that an earlier statement
    of the scope made from one of ``value``'s per-rank names (``reduced_loss =
    reduce_mean(loss)``, or a copy all-reduced in place); None when there is none."""
    logged = {name for name in dotted_names_in(value) if flow.state_of_name(name, at) == Rank.PER_RANK}
    if not logged:
        return None
    copies: dict[str, str | None] = {}  # name -> the logged name it is still the scope's copy of
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
                read = sorted(logged & _names_read(small.value)) if len(small.targets) == 1 else []
                copies[name] = read[0] if read else None
    found = [
        ReducedCopy(name, source) for name, source in copies.items() if source is not None and not _carried_on(flow, name)
    ]
    return next((copy for copy in found if flow.state_of_name(copy.name, at) == Rank.GLOBAL), None)


def reads_to_rename(value: cst.BaseExpression, copy: ReducedCopy, flow: RankFlow, at: cst.CSTNode) -> list[cst.BaseExpression]:
    """The reads of the copy's source in ``value`` that logging the copy instead renames (``loss``
    of ``loss.item()``); none when ``value`` reads another per-rank name too, which the renamed
    value would still log."""
    reads = dotted_reads(value)
    names = [dotted_name(read) for read in reads]
    if any(name != copy.source and flow.state_of_name(name or "", at) == Rank.PER_RANK for name in names):
        return []
    # ``model(x).loss``'s attribute name is no read of a variable ``loss``.
    attributes = {id(node.attr) for node in walk.of_types(value, frozenset({cst.Attribute}))}
    return [read for read, name in zip(reads, names) if name == copy.source and id(read) not in attributes]


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
