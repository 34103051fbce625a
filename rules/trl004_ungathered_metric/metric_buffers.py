"""Whether a class's own ``log()`` reduces its metric buffer across ranks before logging.

Asked by TRL004 of the classes of the linted file and, as the module fact
``REDUCES_STORED_METRICS``, of a base class in another module of the project.

LLaMA-Factory's DPO and KTO trainers store per-rank means and, in ``log()``, stack the buffer's
values into one tensor and ``accelerator.reduce`` it (``"mean"``, or ``"sum"`` of sums and counts
then divided): what they log is the run's value. A value stored into such a buffer is not a
finding. A ``log()`` whose collective carries only other numbers (a loss total) reduces nothing
that was stored.

The same holds for any method of the class that reads the buffer and hands what it read to a
collective, or to a method of the class that the linter cannot see (ms-swift's Megatron GRPO
trainer averages its buffer and passes it to ``self._all_reduce_metric``, inherited from a base
class in another module): the logged values may be the run's, so a stored entry is not proven
per-rank. Unknown is silent. A metric sink (``self.log``, ``super().log``) is no such method.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from trllint.core.cst import walk
from trllint.semantic.context import methods_of
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import GATHERING_CALLS, method_or_function
from trllint.semantic.model import SemanticModel
from trllint.core.cst.names import assigned_names, dotted_name
from trllint.core.prefilter import AnyOf
from trllint.core.source import SourceFile
from trllint.semantic.project.summaries import ModuleFact, top_level_classes
from trllint.semantic.project.file_view import project_view

from .sinks import METRIC_BUFFERS, TRAINER_METRIC_FUNCTION


def log_reduces_stored_metrics(
    cls: cst.ClassDef,
    classes: dict[str, cst.ClassDef],
    buffers: frozenset[str] = frozenset(METRIC_BUFFERS),
    is_sink: Callable[[cst.Call], bool] = lambda call: False,
    identifiers: walk.Identifiers = walk.identifiers,
    whole: bool = False,
) -> bool:
    """True when ``log()`` of ``cls`` (or of a base class in the same file), or another of its
    methods, passes what it read from a metric buffer through a collective or an unseen method;
    with ``whole`` (a buffer kept whole), the buffer itself handed to an unseen method too.
    ``identifiers``: the names in a node (the semantic model's, read once per function)."""
    chain: list[cst.ClassDef] = []
    unseen_base = False
    pending = [cls]
    while pending:
        current = pending.pop()
        if any(current is seen for seen in chain):
            continue
        chain.append(current)
        for base in current.bases:
            name = dotted_name(base.value)
            if name in classes:
                pending.append(classes[name])
            elif name not in (None, "object"):
                unseen_base = True
    defined = {name for current in chain for name in methods_of(current)}

    def opaque(call: cst.Call) -> bool:
        # self.helper(...) that no class of the chain defines: inherited from a base we cannot read.
        func = call.func
        return (
            unseen_base
            and isinstance(func, cst.Attribute)
            and dotted_name(func.value) == "self"
            and func.attr.value not in defined
            and func.attr.value != TRAINER_METRIC_FUNCTION
            and not is_sink(call)
        )

    nearest_log = next((methods_of(c)["log"] for c in chain if "log" in methods_of(c)), None)
    methods = [m for c in chain for name, m in methods_of(c).items() if name != "log"]
    candidates = ([nearest_log] if nearest_log is not None else []) + methods  # the nearest log() runs
    return any(
        _names_a_buffer(method, buffers, identifiers) and _reduces_buffer(method, buffers, opaque, whole) for method in candidates
    )


def stored_metrics_reduced(
    source: SourceFile,
    cls: cst.ClassDef,
    classes: dict[str, cst.ClassDef],
    buffers: frozenset[str] = frozenset(METRIC_BUFFERS),
    is_sink: Callable[[cst.Call], bool] = lambda call: False,
    whole: bool = False,
) -> bool:
    """``log_reduces_stored_metrics`` for a class of the linted file, or a base class of it in
    another module of the project whose ``REDUCES_STORED_METRICS`` says that its methods reduce
    the buffer. A base that the linter cannot read (outside the project) says nothing either way."""
    model = SemanticModel.of(source)
    if log_reduces_stored_metrics(cls, classes, buffers, is_sink, model.identifiers, whole):
        return True
    project = project_view(model)
    if project is None:
        return False
    for base in rank_flows(model).project_bases(cls):
        answer = project.fact(base, REDUCES_STORED_METRICS, deep_if=NAMES_A_METRIC_BUFFER)
        if answer is not None and answer.get(base.name, False):
            return True
    return False


def _reduces_buffer(log: cst.FunctionDef, buffers: frozenset[str], opaque: Callable[[cst.Call], bool], whole: bool) -> bool:
    # Two taints: `tainted` holds names read from a buffer in any way (a collective on them reduces
    # it); `stored` only names holding the stored values (`self._metrics[mode]`, its items), so
    # that an opaque helper handed `self.state.global_step` reduces nothing that was stored.
    tainted: set[str] = set()
    stored: set[str] = set()
    # The last part of every name either taint may match: a dotted name is built only for a node
    # whose own last part is one of them (most nodes of a long method are not).
    tails = {_tail(name) for name in buffers}

    def named(node: cst.CSTNode, names: set[str] | frozenset[str]) -> bool:
        if isinstance(node, cst.Name):
            return node.value in tails and node.value in names
        if isinstance(node, cst.Attribute):
            return node.attr.value in tails and dotted_name(node) in names
        return False

    def reads_buffer(node: cst.CSTNode) -> bool:
        if named(node, tainted) or named(node, buffers):
            return True
        return any(reads_buffer(child) for child in walk.syntax_children(node))

    def reads_stored(node: cst.CSTNode) -> bool:
        if whole and isinstance(node, cst.Attribute) and named(node, buffers):
            return True  # the whole buffer (`self._all_reduce_metric(self.rewards)`)
        if isinstance(node, cst.Subscript):
            root: cst.CSTNode = node
            while isinstance(root, cst.Subscript):
                root = root.value
            if dotted_name(root) in buffers:
                return True
        if named(node, stored):
            return True
        return any(reads_stored(child) for child in walk.syntax_children(node))

    mentioned: dict[int, frozenset[str]] = {}  # value -> the names and attribute names it reads

    def taint(value: cst.CSTNode, names: list[str]) -> None:
        # Both taints need a name whose last part is a tail: most values of a long method have none.
        if id(value) not in mentioned:
            mentioned[id(value)] = walk.identifiers(value)
        if tails.isdisjoint(mentioned[id(value)]):
            return
        if reads_buffer(value):
            tainted.update(names)
            tails.update(_tail(name) for name in names)
        if reads_stored(value):
            stored.update(names)
            tails.update(_tail(name) for name in names)

    reduced = False

    class Flow(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            taint(node.value, [n for target in node.targets for n in assigned_names(target.target)])

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            taint(node.value, assigned_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            taint(node.iter, assigned_names(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            taint(node.iter, assigned_names(node.target))

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal reduced
            if is_gathering_call(node) and any(reads_buffer(arg.value) for arg in node.args):
                reduced = True
            elif opaque(node) and any(reads_stored(arg.value) for arg in node.args):
                reduced = True
            elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ("append", "extend", "update"):
                # metric_list.append(buffer mean), metrics.update({k: mean(v) for k, v in buffer.items()})
                for arg in node.args:
                    taint(arg.value, assigned_names(node.func.value))

    walk.visit(log.body, Flow())
    if not reduced and (tainted or stored):
        # A second pass carries what a loop (or comprehension) taints back to its top; with
        # nothing tainted it would see exactly what the first saw.
        walk.visit(log.body, Flow())
    return reduced


def reduces_stored_metrics(cls: cst.ClassDef, identifiers: walk.Identifiers = walk.identifiers) -> bool:
    """The class's own methods reduce TRL's metric buffers before logging.

    Asked of every class of a module another module's class inherits from: a class that never
    names a buffer is answered by one walk, without the taint analysis of each method."""
    return _names_a_buffer(cls, METRIC_BUFFERS, identifiers) and log_reduces_stored_metrics(
        cls, {}, identifiers=identifiers
    )


def _classes_reducing_stored_metrics(model: SemanticModel) -> dict[str, bool]:
    """Class name -> True for each class of the module whose own methods reduce the buffers."""
    answer: dict[str, bool] = {}
    for cls in top_level_classes(model):
        if reduces_stored_metrics(cls, model.identifiers):
            answer[cls.name.value] = True
        else:
            answer.pop(cls.name.value, None)  # a later class of the name wins, as Python binds it
    return answer


REDUCES_STORED_METRICS = ModuleFact("trl004.reduces-stored-metrics", 9, _classes_reducing_stored_metrics)
# A class reduces the buffers only where it names one (``_names_a_buffer``): a module that spells
# no buffer's last part is not parsed for REDUCES_STORED_METRICS (its answer is {}).
NAMES_A_METRIC_BUFFER = AnyOf(*{buffer.rsplit(".", 1)[-1] for buffer in METRIC_BUFFERS})


def _names_a_buffer(node: cst.CSTNode, buffers: frozenset[str] | tuple[str, ...], identifiers: walk.Identifiers) -> bool:
    """``node`` names an attribute (or a name) a buffer ends with. Nothing can be read from a
    buffer, so nothing reduced, without that: the taint analysis is spared."""
    return not identifiers(node).isdisjoint(_tail(buffer) for buffer in buffers)


def _tail(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def is_gathering_call(node: cst.CSTNode) -> bool:
    """A gather or a reduction (leading underscores stripped: a Trainer's ``_nested_gather``)."""
    return isinstance(node, cst.Call) and (method_or_function(node) or "").lstrip("_") in GATHERING_CALLS
