"""Which methods make their own object the same on every rank: a meter that all-reduces its
count and total and stores them back (``SmoothedValue.synchronize_between_processes``), and a
logger that asks each of its meters to (``MetricLogger.synchronize_between_processes``).

The rank flows read ``metric_logger.synchronize_between_processes()``, on an object the scope
built from such a class (of the file, or of another module of the project through
``SYNCS_ITS_OBJECT``), as making the object global from then on.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, assigned_names, dotted_name
from trllint.facts.rank_lattice import IN_PLACE_COLLECTIVES, method_or_function, names_in, written_tensor
from trllint.facts.in_place_reductions import reduced_name
from trllint.semantic.context import methods_of
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.summaries import ModuleFact

# `reduce` and `gather` leave their result on one rank only.
_ONE_RANK_ONLY = frozenset({"reduce", "gather"})


def object_syncing_methods(module: cst.Module, imports: ImportMap) -> dict[str, list[str]]:
    """``Class`` -> the methods of the module's class that make its object the same on every rank:
    one that stores on ``self`` what an all-reduce (or a broadcast) left in a tensor (``t =
    torch.tensor([self.count, self.total]); dist.all_reduce(t); self.count = int(t[0])``), or
    that calls such a method on ``self`` or on a member given objects of the class
    (``self.meters = defaultdict(SmoothedValue)``, ``self.meters[k] = SmoothedValue()``, then ``for
    meter in self.meters.values(): meter.synchronize_between_processes()``)."""
    classes = {cls.name.value: cls for cls in module.body if isinstance(cls, cst.ClassDef)}
    readings: dict[tuple[str, str], _ObjectSync] = {}
    held: dict[tuple[str, str], set[str]] = {}  # (class, self attribute) -> the module's classes it is given
    for class_name, cls in classes.items():
        for name, function in methods_of(cls).items():
            reading = _ObjectSync(function, imports, frozenset(classes))
            walk.visit(function, reading)
            readings[class_name, name] = reading
            for attribute, named in reading.holds.items():
                held.setdefault((class_name, attribute), set()).update(named)
    syncing = {key for key, reading in readings.items() if reading.stores_reduced}
    grown = True
    while grown:  # a method that asks a syncing one of its object or a member syncs too, to any depth
        grown_by = {
            (class_name, name)
            for (class_name, name), reading in readings.items()
            if (class_name, name) not in syncing
            and any(
                (member_class, method) in syncing
                for attribute, method in reading.member_calls
                for member_class in ({class_name} if attribute == "self" else held.get((class_name, attribute), ()))
            )
        }
        syncing |= grown_by
        grown = bool(grown_by)
    answer: dict[str, list[str]] = {}
    for class_name, name in sorted(syncing):
        answer.setdefault(class_name, []).append(name)
    return answer


class _ObjectSync(cst.CSTVisitor):
    """What one method's own statements do with its object: store on ``self`` what a collective
    reduced for every rank, give a ``self`` attribute an object of one of the module's classes,
    and call which methods on ``self`` or its attributes (``self.x.m()``, or ``m()`` of a loop
    variable over ``self.x``)."""

    def __init__(self, function: cst.FunctionDef, imports: ImportMap, classes: frozenset[str]) -> None:
        super().__init__()
        self.function = function
        self.imports = imports
        self.classes = classes
        self.stores_reduced = False
        self.holds: dict[str, set[str]] = {}  # self attribute -> the module's classes its values name
        self.member_calls: set[tuple[str, str]] = set()  # ("self" or "self.x", method)
        self._reduced: set[str] = set()  # local names holding what a collective reduced
        self._loop_members: dict[str, str] = {}  # loop variable -> the self attribute it walks

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function  # a nested function runs when called, not here

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assigned(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assigned(node.target, node.value)

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        read = set(names_in(value))
        from_reduced = bool(read & self._reduced)
        targets = target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]
        for element in targets:
            single = element.value if isinstance(element, cst.BaseElement) else element
            attribute = _self_attribute(single)
            if attribute not in (None, "self"):
                self.stores_reduced |= from_reduced  # `self.count = int(t[0])`
                self.holds.setdefault(attribute, set()).update(read & self.classes)
            elif from_reduced:
                self._reduced.update(assigned_names(single))  # `t = t.tolist()`: still what the collective left

    def visit_For(self, node: cst.For) -> None:
        attribute = _self_attribute(node.iter)
        if attribute is not None:
            for name in assigned_names(node.target):
                self._loop_members[name] = attribute

    def visit_Call(self, node: cst.Call) -> None:
        written = written_tensor(node, self.imports)
        if written is not None:
            name = reduced_name(written) if method_or_function(node) not in _ONE_RANK_ONLY else None
            if name is not None and name.startswith("self."):
                self.stores_reduced = True  # `dist.all_reduce(self.total)`
            elif name is not None:
                self._reduced.add(name)
            return
        if not isinstance(node.func, cst.Attribute):
            return
        receiver = node.func.value
        attribute = self._loop_members.get(receiver.value) if isinstance(receiver, cst.Name) else None
        attribute = attribute or _self_attribute(receiver)
        if attribute is not None:
            self.member_calls.add((attribute, node.func.attr.value))
            named = {name for arg in node.args for name in names_in(arg.value)} & self.classes
            self.holds.setdefault(attribute, set()).update(named)  # `self.meters.setdefault(k, SmoothedValue())`


def _self_attribute(node: cst.BaseExpression) -> str | None:
    """``self.meters`` for ``self.meters.values()`` or ``self.meters["loss"]``, ``self`` for
    ``self``: the attribute of ``self`` an expression reads from; None when it reads none."""
    read = node
    innermost: cst.Attribute | None = None  # the attribute read first, nearest the name
    while isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
        if isinstance(node, cst.Attribute):
            innermost = node
        node = node.func if isinstance(node, cst.Call) else node.value
    if not (isinstance(node, cst.Name) and node.value == "self"):
        return None
    if innermost is None:
        return "self" if node is read else None
    return f"self.{innermost.attr.value}" if innermost.value is node else None


def _syncs_its_object(model: SemanticModel) -> dict[str, list[str]]:
    return object_syncing_methods(model.source.module, model.imports)


# Which classes of a module have methods that make their object the same on every rank, and
# which. Read from the module alone, so a module read for its facts may ask it of its imports.
SYNCS_ITS_OBJECT = ModuleFact(
    "rank-flow.syncs-its-object", 1, _syncs_its_object, calls=frozenset(IN_PLACE_COLLECTIVES), reads_other_modules=False
)
