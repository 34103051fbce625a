"""How metrics are spelled in source: sink calls, TRL's metric buffers, metric dict displays.

Syntax only; what the values hold is RankFlow's question (trllint.facts.rank_flow).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import call_name, dotted_name, last_attribute

Statements = Sequence[tuple[cst.CSTNode, cst.CSTNode]]  # (small statement, its line), in order

# Per-step metric buffers TRL's trainers average in `log()` (store_metrics writes the second).
from trllint.rules.trl004_ungathered_metric.sinks import METRIC_BUFFERS
DICT_FACTORIES = ("dict", "defaultdict", "OrderedDict")


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def statement_calls(small: cst.CSTNode) -> list[cst.Call]:
    value = getattr(small, "value", None)
    # `self.control = self.callback_handler.on_log(...)`: a sink whose result is kept.
    # Leaf classes compared with `is` (trllint.core.cst.walk.node_types): asked of every statement.
    kind = type(small)
    return [value] if (kind is cst.Expr or kind is cst.Return or kind is cst.Assign) and type(value) is cst.Call else []


def loose_name(node: cst.CSTNode) -> str:
    """``self.accelerator.trackers[0].log`` -> ``self.accelerator.trackers.log`` (calls and
    subscripts skipped), so trackers reached through an index or a getter still read as trackers."""
    parts: list[str] = []
    while True:
        # Leaf classes, compared with `is` (trllint.core.cst.walk.node_types).
        if type(node) is cst.Attribute:
            parts.append(node.attr.value)
            node = node.value
        elif type(node) is cst.Subscript:
            node = node.value
        elif type(node) is cst.Call:
            node = node.func
        else:
            if type(node) is cst.Name:
                parts.append(node.value)
            return ".".join(reversed(parts))


def buffer_root(node: cst.CSTNode, buffers: frozenset[str] | tuple[str, ...] = METRIC_BUFFERS) -> bool:
    """``self._metrics[mode]["kl"].append``, ``self._metrics[mode]["n"]``, ``self.stats.append``:
    a write into one of ``buffers`` (TRL's, and any attribute the file hands to a sink)."""
    if not isinstance(node, (cst.Attribute, cst.Subscript)):
        return False
    inner = node.value if isinstance(node, cst.Attribute) else node
    while isinstance(inner, cst.Subscript):
        inner = inner.value
    return inner is not node and dotted_name(inner) in buffers


def self_attributes_read(node: cst.CSTNode) -> set[str]:
    """``self.x`` names read anywhere in ``node`` (``{k: mean(v) for k, v in self.stats.items()}``)."""
    found: set[str] = set()
    name = dotted_name(node) if isinstance(node, cst.Attribute) else None
    if name is not None and name.startswith("self.") and name.count(".") == 1:
        found.add(name)
    for child in walk.syntax_children(node):
        found |= self_attributes_read(child)
    return found


def builds_dict(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, (cst.Dict, cst.DictComp)) or (
        isinstance(value, cst.Call) and last_attribute(call_name(value)) in DICT_FACTORIES
    )


def dict_values(node: cst.BaseExpression, dicts: dict[str, bool], stored: bool) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Call) and call_name(node) == "dict":
        return [a.value for a in node.args if a.keyword is not None]
    if not isinstance(node, cst.Dict):
        return []
    values = []
    for element in node.elements:
        if isinstance(element, cst.DictElement):
            values.append(element.value)
        elif isinstance(element.value, cst.Name):  # {**logs, **metrics}
            dicts[element.value.value] = dicts.get(element.value.value, True) and stored
    return values


# Media a tracker shows as a sample (wandb.Image, swanlab.Audio, ...): rank 0's images are
# examples of the output, not a slice of a number to average over ranks.
MEDIA_TYPES = frozenset({"Image", "Video", "Audio", "Table", "Html", "Object3D", "Molecule"})


def is_media(value: cst.BaseExpression) -> bool:
    """``wandb.Image(img)``, or a list (comprehension) of such."""
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return is_media(value.elt)
    if isinstance(value, (cst.List, cst.Tuple)):
        return bool(value.elements) and all(is_media(e.value) for e in value.elements)
    return isinstance(value, cst.Call) and last_attribute(call_name(value)) in MEDIA_TYPES


def elements(value: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    if isinstance(value, (cst.List, cst.Tuple)):
        return [e.value for e in value.elements]
    return [value] if value is not None else []


def dotted_names_in(node: cst.CSTNode) -> list[str]:
    """The outermost dotted names read in ``node`` (``outputs.loss``, not ``outputs``)."""
    return [dotted_name(read) or "" for read in dotted_reads(node)]


def dotted_reads(node: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
    """The nodes of the outermost dotted names read in ``node``; of ``model(x).loss``, its
    receiver's and the attribute's name node."""
    if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) is not None:
        return [node]
    if isinstance(node, cst.Attribute):
        return [*dotted_reads(node.value), node.attr]
    if isinstance(node, cst.Call):
        found = [n for arg in node.args for n in dotted_reads(arg.value)]
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        return found + (dotted_reads(receiver) if receiver is not None else [])
    return [n for child in walk.syntax_children(node) for n in dotted_reads(child)]


def attributes_read_by_sinks(scopes: Sequence[Statements], logged_arguments: Callable[[cst.Call], list]) -> frozenset[str]:
    """``self.x`` attributes whose contents reach a sink in ``scopes``: read in a sink's argument,
    or put into a dict a sink logs (``logs.update(...)``). Only a scope that calls a sink adds one."""
    found: set[str] = set()
    for statements in scopes:
        logged_dicts: set[str] = set()
        for small, _ in statements:
            for call in statement_calls(small):
                for arg, _ in logged_arguments(call):
                    found |= self_attributes_read(arg)
                    logged_dicts.add(dotted_name(arg) or "")
        for small, _ in statements:
            for call in statement_calls(small):
                if isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) in logged_dicts:
                    found |= {n for arg in call.args for n in self_attributes_read(arg.value)}
            if isinstance(small, cst.Assign) and any(
                isinstance(t.target, cst.Subscript) and dotted_name(t.target.value) in logged_dicts for t in small.targets
            ):
                found |= self_attributes_read(small.value)
    return frozenset(found)


def written_as_buffers(names: Iterable[str], scopes: Sequence[Statements]) -> frozenset[str]:
    """Those of ``names`` some scope writes like a buffer (``self.stats[key].append(v)``,
    ``self.stats[key] = v``): a metric buffer by another name."""
    return frozenset(name for name in names if _written_as_buffer(name, scopes))


def _written_as_buffer(name: str, scopes: Sequence[Statements]) -> bool:
    for statements in scopes:
        for small, _ in statements:
            if any(
                buffer_root(call.func, (name,)) and last_attribute(loose_name(call.func)) in ("append", "extend")
                for call in statement_calls(small)
            ):
                return True
            if isinstance(small, cst.Assign) and any(buffer_root(t.target, (name,)) for t in small.targets):
                return True
    return False
