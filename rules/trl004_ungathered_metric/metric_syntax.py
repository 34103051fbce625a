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


def attributes_reaching_sinks(scopes: Sequence[Statements], logged_arguments: Callable[[cst.Call], list]) -> frozenset[str]:
    """``self.x`` attributes read in a sink's argument or in what a name the sink logs is built
    from in the same scope, to any depth (``logs = {**logs, **metrics}``, ``metrics.update(custom)``,
    ``custom = self.compute_metrics(EvalPrediction(label_ids=self._rewards))``). Wider than
    ``attributes_read_by_sinks`` (it takes the operands too: ``self.state`` of ``step =
    self.state.global_step``), so asked only for buffers joined to, which no other attribute is.
    Only a scope that calls a sink adds one."""
    found: set[str] = set()
    for statements in scopes:
        feeding: set[str] = set()  # the scope's names whose contents reach a sink
        for small, _ in statements:
            for call in statement_calls(small):
                for arg, _ in logged_arguments(call):
                    found |= self_attributes_read(arg)
                    feeding |= local_names_read(arg)
        writes = [write for small, _ in statements for write in _local_writes(small)] if feeding else []
        grown = True
        while grown:  # a name built from a name built from ...: to a fixed point
            grown = False
            for written, value in writes:
                if written in feeding:
                    found |= self_attributes_read(value)
                    new = local_names_read(value) - feeding
                    feeding |= new
                    grown = grown or bool(new)
    return frozenset(found)


def local_names_read(node: cst.CSTNode) -> set[str]:
    """The plain names ``node`` reads (``metrics`` of ``metrics["loss"]``, ``logs`` of ``{**logs}``),
    not the attribute parts of a dotted name."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return local_names_read(node.value)
    return {name for child in walk.syntax_children(node) for name in local_names_read(child)}


# The methods that put their arguments into a dict or list (``metrics.update(custom)``).
_FILLING_METHODS = frozenset({"update", "append", "extend", "insert", "setdefault", "add"})


def _local_writes(small: cst.CSTNode) -> list[tuple[str, cst.CSTNode]]:
    """(name, what is put into it) for each write of a plain name in ``small``: ``name = v``,
    ``name += v``, ``name[key] = v``, ``name.update(v)``; not ``self``'s, an object's own."""
    writes: list[tuple[str, cst.CSTNode]] = []
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        for target in targets:
            root = target.value if isinstance(target, cst.Subscript) else target
            if isinstance(root, cst.Name):
                writes.append((root.value, small.value))
    for call in statement_calls(small):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _FILLING_METHODS:
            writes.extend((func.value.value, arg.value) for arg in call.args)
    return [(name, value) for name, value in writes if name not in ("self", "cls")]


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


def accumulated_buffers(names: Iterable[str], scopes: Sequence[Statements]) -> frozenset[str]:
    """Those of ``names`` some scope extends by binding them again with what they held and more
    values, as a list's ``extend`` would (``self.rewards = torch.cat([self.rewards, r])``,
    ``self.texts += [t]``): a buffer each of whose bindings (``self.rewards = r`` too) stores
    values. A running number (``self.total += loss``, ``self.ema = 0.9 * self.ema + x``) is none:
    what log() makes of it, and whether it reduces it, is not read."""
    wanted = frozenset(names)
    return frozenset(
        name for statements in scopes for small, _ in statements if (name := bound_buffer(small, wanted)) and _extends(small, name)
    )


def bound_buffer(small: cst.CSTNode, buffers: frozenset[str]) -> str | None:
    """The one of ``buffers`` that ``small`` binds itself (``self.rewards = v``, ``self.texts += v``)."""
    if isinstance(small, cst.AugAssign):
        targets = [small.target]
    elif isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    else:
        return None
    return next((name for target in targets if (name := dotted_name(target)) in buffers), None)


# Calls that join tensors or arrays end to end: `torch.cat([buffer, values])` extends the buffer.
_JOINING_CALLS = frozenset({"cat", "concat", "concatenate", "vstack", "hstack"})


def _extends(small: cst.CSTNode, name: str) -> bool:
    if isinstance(small, cst.AugAssign):
        return isinstance(small.operator, cst.AddAssign) and isinstance(small.value, (cst.List, cst.ListComp))
    value = small.value if isinstance(small, cst.Assign) else None
    if not (isinstance(value, cst.Call) and last_attribute(call_name(value)) in _JOINING_CALLS and value.args):
        return False
    joined = value.args[0].value
    return isinstance(joined, (cst.List, cst.Tuple)) and any(dotted_name(e.value) == name for e in joined.elements)
