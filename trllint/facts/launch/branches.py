"""Branches that settle the launch at a node: whether a model is wrapped, which backend runs.

Code that handles both launches tests for the wrapper and reads the bare model on the other arm:

    config = model.module.config if hasattr(model, "module") else model.config
    if accelerator.num_processes > 1: ... model.module ... else: ... model.config ...
    if isinstance(model, (DistributedDataParallel, DeepSpeedEngine)): return model.module.config
    return model.config

A test *says wrapped* when it holds whenever the model is wrapped: ``hasattr(m, "module")``,
``isinstance(m, <a wrapper class>)``, several processes (``num_processes > 1``, ``world_size >
1``, ``distributed_type != DistributedType.NO``), ``A or B`` of such tests. On the arm where it
is false (the ``else``, the body of ``if not ...``, the code after ``if <test>: return``) the
model is bare, and reading a model member there is correct.

A test *names backends* when it is true exactly under them: ``accelerator.distributed_type ==
DistributedType.DEEPSPEED``, ``is_deepspeed_zero3_enabled()``, ``self.is_fsdp_enabled``. The
diffusers examples fixed their ``save_state`` hang under DeepSpeed with ``if
accelerator.is_main_process or accelerator.distributed_type == DistributedType.DEEPSPEED:``: under
the backends such an ``or`` names, every rank enters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from trllint.core.cst.names import call_name, dotted_name, last_attribute
from trllint.facts.launch.backends import DEEPSPEED, Backend

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

WRAPPER_CLASSES = frozenset(
    {"DistributedDataParallel", "DDP", "DataParallel", "FullyShardedDataParallel", "FSDP", "DeepSpeedEngine", "PipelineEngine"}
)
_PROCESS_COUNTS = ("num_processes", "world_size", "n_gpu", "num_gpus", "_n_gpu", "WORLD_SIZE")
_ENDS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def unwrapped_at(model: SemanticModel, read: cst.Attribute) -> bool:
    """The receiver of ``read`` is bare here: it sits where a test that says wrapped is false."""
    receiver = model.source.module.code_for_node(read.value)
    child: cst.CSTNode = read
    for ancestor in model.context.ancestors(read):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
            in_body = child is ancestor.body
            if says_wrapped(ancestor.test, receiver, negated=in_body):
                return True
        if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
            # `not hasattr(m, "module") and m.config`, `hasattr(m, "module") or m.config`
            if says_wrapped(ancestor.left, receiver, negated=isinstance(ancestor.operator, cst.And)):
                return True
        if isinstance(ancestor, cst.IndentedBlock) and _ended_before(ancestor, child, receiver):
            return True
        child = ancestor
    return False


def _ended_before(block: cst.IndentedBlock, child: cst.CSTNode, receiver: str) -> bool:
    """``if <says wrapped>: ... return`` earlier in the block: after it, the model is bare."""
    for statement in block.body:
        if statement is child:
            return False
        if isinstance(statement, cst.If) and statement.orelse is None and _always_ends(statement.body):
            if says_wrapped(statement.test, receiver, negated=False):
                return True
    return False


def _always_ends(body: cst.BaseSuite) -> bool:
    statements = getattr(body, "body", ())
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], _ENDS)
    return isinstance(last, _ENDS)  # `if <test>: return x` on one line: the suite holds the statements


def says_wrapped(test: cst.BaseExpression, receiver: str, *, negated: bool) -> bool:
    """With ``negated`` False: ``test`` is true whenever ``receiver`` is wrapped (so false means
    bare). With ``negated`` True: ``test`` is true only when ``receiver`` is bare."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return says_wrapped(test.expression, receiver, negated=not negated)
    if isinstance(test, cst.BooleanOperation):
        # True whenever wrapped: `A or B` needs either operand to say so, `A and B` both. True only
        # when bare (negated): `A and B` needs either, `A or B` both.
        either = isinstance(test.operator, cst.Or) != negated
        left = says_wrapped(test.left, receiver, negated=negated)
        right = says_wrapped(test.right, receiver, negated=negated)
        return (left or right) if either else (left and right)
    if negated:
        return _bare_test(test, receiver)
    return _wrapped_test(test, receiver)


def _wrapped_test(test: cst.BaseExpression, receiver: str) -> bool:
    if isinstance(test, cst.Call):
        name = call_name(test) or ""
        args = [a.value for a in test.args]
        if name == "hasattr" and len(args) == 2 and _is(args[0], receiver):
            return isinstance(args[1], cst.SimpleString) and args[1].evaluated_value == "module"
        if name == "isinstance" and len(args) == 2 and _is(args[0], receiver):
            return _names_wrappers(args[1])
        return False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left, right, operator = test.left, target.comparator, target.operator
        if _process_count(left) and isinstance(right, cst.Integer):
            # several processes: `> 1`, `>= 2`, `!= 1`
            bound = {cst.GreaterThan: 1, cst.GreaterThanEqual: 2, cst.NotEqual: 1}.get(type(operator))
            return bound is not None and int(right.value) == bound
        if _distributed_type(left) and isinstance(operator, (cst.NotEqual, cst.IsNot)):
            return (last_attribute(dotted_name(right) or "") or "") == "NO"
    return False


def _bare_test(test: cst.BaseExpression, receiver: str) -> bool:
    """``test`` true only when the model is bare: one process."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left, right, operator = test.left, target.comparator, target.operator
        if _process_count(left) and isinstance(right, cst.Integer) and int(right.value) == 1:
            return isinstance(operator, (cst.Equal, cst.LessThanEqual))
        if _distributed_type(left) and isinstance(operator, (cst.Equal, cst.Is)):
            return (last_attribute(dotted_name(right) or "") or "") == "NO"
    return False


def _is(node: cst.BaseExpression, receiver: str) -> bool:
    return dotted_name(node) == receiver


def _names_wrappers(classes: cst.BaseExpression) -> bool:
    if isinstance(classes, (cst.Tuple, cst.List)):
        return bool(classes.elements) and any(_names_wrappers(e.value) for e in classes.elements)
    name = dotted_name(classes)
    return name is not None and (last_attribute(name) or name) in WRAPPER_CLASSES


def _process_count(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call) and (call_name(node) or "").endswith("get_world_size"):
        return True
    name = dotted_name(node)
    return name is not None and (last_attribute(name) or name) in _PROCESS_COUNTS


def _distributed_type(node: cst.BaseExpression) -> bool:
    name = dotted_name(node)
    return name is not None and (last_attribute(name) or name) == "distributed_type"


_BACKEND_TYPES = {"DEEPSPEED": DEEPSPEED, "FSDP": frozenset({Backend.FSDP}), "MULTI_GPU": frozenset({Backend.DDP})}
_BACKEND_FLAGS = {
    "is_deepspeed_enabled": DEEPSPEED,
    "is_deepspeed_zero3_enabled": frozenset({Backend.ZERO3}),
    "is_fsdp_enabled": frozenset({Backend.FSDP}),
}


def backends_named(test: cst.BaseExpression) -> frozenset[Backend]:
    """The backends under which ``test`` is true for certain (empty: none known)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return backends_named(test.left) | backends_named(test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if _distributed_type(test.left) and isinstance(target.operator, (cst.Equal, cst.Is)):
            return _BACKEND_TYPES.get(last_attribute(dotted_name(target.comparator) or "") or "", frozenset())
        return frozenset()
    node = test.func if isinstance(test, cst.Call) else test
    name = dotted_name(node)
    return _BACKEND_FLAGS.get((last_attribute(name) or name) if name else "", frozenset())

