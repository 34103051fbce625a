"""Whether a class's own ``log()`` reduces its metric buffer across ranks before logging.

LLaMA-Factory's DPO and KTO trainers store per-rank means and, in ``log()``, stack the buffer's
values into one tensor and ``accelerator.reduce`` it (``"mean"``, or ``"sum"`` of sums and counts
then divided): what they log is the run's value. A value stored into such a buffer is not a
finding. A ``log()`` whose collective carries only other numbers (a loss total) reduces nothing
that was stored.
"""

from __future__ import annotations

import libcst as cst

from trllint.analysis import walk
from trllint.analysis.context import methods_of
from trllint.analysis.gathering import is_gathering_call
from trllint.analysis.names import assigned_names, dotted_name

from .metric_syntax import METRIC_BUFFERS



def log_reduces_stored_metrics(
    cls: cst.ClassDef, classes: dict[str, cst.ClassDef], buffers: frozenset[str] = frozenset(METRIC_BUFFERS)
) -> bool:
    """True when ``log()`` of ``cls`` (or of a base class in the same file) passes what it read
    from a metric buffer through a collective."""
    seen: set[int] = set()
    pending = [cls]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        log = methods_of(current).get("log")
        if log is not None:
            return _reduces_buffer(log, buffers)  # the nearest override is the one that runs
        pending.extend(classes[n] for b in current.bases if (n := dotted_name(b.value)) in classes)
    return False


def _reduces_buffer(log: cst.FunctionDef, buffers: frozenset[str]) -> bool:
    tainted: set[str] = set()

    def reads_buffer(node: cst.CSTNode) -> bool:
        name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None and (name in tainted or name in buffers):
            return True
        return any(reads_buffer(child) for child in walk.syntax_children(node))

    reduced = False

    class Flow(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if reads_buffer(node.value):
                for target in node.targets:
                    tainted.update(assigned_names(target.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if reads_buffer(node.value):
                tainted.update(assigned_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            if reads_buffer(node.iter):
                tainted.update(assigned_names(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            if reads_buffer(node.iter):
                tainted.update(assigned_names(node.target))

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal reduced
            arguments_read = any(reads_buffer(arg.value) for arg in node.args)
            if is_gathering_call(node) and arguments_read:
                reduced = True
            elif arguments_read and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("append", "extend"):
                tainted.update(assigned_names(node.func.value))  # metric_list.append(buffer mean)

    for _ in range(2):  # a second pass carries what a loop (or comprehension) taints back to its top
        walk.visit(log.body, Flow())
    return reduced
