"""The text of TRL004's fix: ``accelerator.gather(x.mean()).mean()``, wrapped to the line length."""

from __future__ import annotations

import libcst as cst

from trllint.rule.edits import arguments_on_their_own_line, indent_of
from trllint.rule.base import Edit
from trllint.core.source import SourceFile

from .devices import cpu_moves, without_cpu_moves
from .gather_sites import GatherSite, GatherUnsafe
from .metric_syntax import parenthesized


def gather_callee(site: GatherSite, accelerator: str) -> str:
    """``gather``, not ``gather_for_metrics``, for the ranks' 0-d values: on the last batch of an
    uneven loader the latter truncates its result to the samples left, which would drop whole
    ranks' values. A whole tensor (an unsafe fix) is gathered per sample, which that truncation suits."""
    return f"{accelerator}.{'gather_for_metrics' if site.unsafe is GatherUnsafe.WHOLE_TENSOR else 'gather'}"


def proposed_gather(site: GatherSite, accelerator: str) -> str:
    """What the fix writes, in the message's words (``x`` for the logged value)."""
    reduce = site.reduce_after
    if site.unsafe is GatherUnsafe.WHOLE_TENSOR:
        return f"{gather_callee(site, accelerator)}(x).{reduce}()"
    return f"{gather_callee(site, accelerator)}(x.{reduce}()).{reduce}()"


def gathered_argument(site: GatherSite) -> cst.BaseExpression:
    """What the gather takes: the value, on its device (NCCL gathers GPU tensors only: a
    ``.cpu()`` of the value's chain moves to after the gather, see :func:`gather_expression`)."""
    tensor = without_cpu_moves(site.tensor).with_changes(lpar=[], rpar=[])
    if site.cast_to_float:  # mean() of an integer tensor raises
        tensor = cst.Call(func=cst.Attribute(value=parenthesized(tensor), attr=cst.Name("float")))
    return tensor


def gather_expression(site: GatherSite, accelerator: str) -> cst.BaseExpression:
    """The ranks' values gathered, then reduced again (one value per rank)."""
    gathered = cst.Call(func=cst.parse_expression(gather_callee(site, accelerator)), args=[cst.Arg(gathered_argument(site))])
    reduced = cst.Call(func=cst.Attribute(value=gathered, attr=cst.Name(site.reduce_after)))
    return cst.Call(func=cst.Attribute(value=reduced, attr=cst.Name("cpu"))) if cpu_moves(site.tensor) else reduced


def wrapped_to_line_length(edit: Edit, site: GatherSite, accelerator: str, source: SourceFile, line_length: int) -> Edit:
    """The edit with the gather's argument on a line of its own when the fixed line would pass
    ``line_length`` (trllint.rule.edits)."""
    line, column = source.position(edit.start)
    end_line, end_column = source.position(edit.end)
    text = source.lines[line - 1]
    if line != end_line or "\n" in edit.content:
        return edit
    if len((text[:column] + edit.content + text[end_column:]).rstrip()) <= line_length:
        return edit
    argument = source.module.code_for_node(gathered_argument(site))
    inside = arguments_on_their_own_line(argument, indent_of(text), source.module)
    moved = ".cpu()" if cpu_moves(site.tensor) else ""
    return Edit(edit.start, edit.end, f"{gather_callee(site, accelerator)}({inside}).{site.reduce_after}(){moved}")
