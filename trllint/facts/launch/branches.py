"""Branches that settle the launch at a node: whether a model is wrapped, which backend runs.

Code that handles both launches tests for the wrapper and reads the bare model on the other arm:

    config = model.module.config if hasattr(model, "module") else model.config
    if accelerator.num_processes > 1: ... model.module ... else: ... model.config ...
    if isinstance(model, (DistributedDataParallel, DeepSpeedEngine)): return model.module.config
    return model.config

A test *says wrapped* when it holds whenever the model is wrapped: ``hasattr(m, "module")``,
``isinstance(m, <a wrapper class>)``, several processes (``num_processes > 1``, ``world_size >
1``, ``distributed_type != DistributedType.NO``), a process group (``dist.is_initialized()``,
which DDP needs), ``A or B`` of such tests, a function of the file that returns one
(``def is_dist(): return dist.is_available() and dist.is_initialized()``). On the arm where it
is false (the ``else``, the body of ``if not ...``, the code after ``if <test>: return``) the
model is bare, and reading a model member there is correct.

A test *names backends* when it is true exactly under them: ``accelerator.distributed_type ==
DistributedType.DEEPSPEED``, ``is_deepspeed_zero3_enabled()``, ``self.is_fsdp_enabled``, a
program's own switch named after a backend (``config.use_fsdp``, ``args.deepspeed``) or compared
with a backend's name (``train_engine == "torch_ddp"``). The
diffusers examples fixed their ``save_state`` hang under DeepSpeed with ``if
accelerator.is_main_process or accelerator.distributed_type == DistributedType.DEEPSPEED:``: under
the backends such an ``or`` names, every rank enters. ``backends_required`` asks the other way:
under which backends a test can be true at all (the body of ``if use_fsdp and ...:`` runs under
FSDP only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import libcst as cst

from trllint.core.cst.names import call_name, dotted_name, last_attribute, read_through
from trllint.facts.branches import Knowledge, holds_at
from trllint.facts.launch.backends import (
    ANY,
    BACKEND_FLAGS,
    DISTRIBUTED_TYPE_BACKENDS,
    ENGINE_SWITCH_VALUES,
    Backend,
    backends_of_flag,
)

if TYPE_CHECKING:
    from trllint.semantic.context import NodeContext
    from trllint.semantic.model import SemanticModel

WRAPPER_CLASSES = frozenset(
    {"DistributedDataParallel", "DDP", "DataParallel", "FullyShardedDataParallel", "FSDP", "DeepSpeedEngine", "PipelineEngine"}
)
# A process group exists: true wherever DDP wraps (DistributedDataParallel needs one).
_PROCESS_GROUP_TESTS = frozenset({"dist.is_initialized", "torch.distributed.is_initialized"})
_PROCESS_COUNTS = ("num_processes", "world_size", "n_gpu", "num_gpus", "_n_gpu", "WORLD_SIZE")


def unwrapped_at(model: SemanticModel, read: cst.Attribute) -> bool:
    """The receiver of ``read`` is bare here: it sits where a test that says wrapped is false
    (the shared branch walk of ``trllint.facts.branches``, asked of the property "bare")."""
    receiver = model.source.module.code_for_node(read.value)
    functions = {f.name.value: f for f in model.source.module.body if isinstance(f, cst.FunctionDef)}

    def bare(test: cst.BaseExpression) -> Knowledge:
        # Bare when true (one process), bare when false (a test every wrapped model passes).
        wrapped = _wrapped_test(test, receiver) or _returns_a_wrapped_test(test, functions, receiver)
        return (True if _bare_test(test, receiver) else None, True if wrapped else None)

    return holds_at(read, model.context, bare)


def _returns_a_wrapped_test(test: cst.BaseExpression, functions: dict[str, cst.FunctionDef], receiver: str) -> bool:
    """``test`` calls a function of the file whose whole body returns a test that says wrapped."""
    if not isinstance(test, cst.Call) or test.args:
        return False
    function = functions.get(call_name(test) or "")
    if function is None or not isinstance(function.body, cst.IndentedBlock):
        return False
    statements = [s for s in function.body.body if not _is_docstring(s)]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    returned = statements[0].body[0]
    if not isinstance(returned, cst.Return) or returned.value is None:
        return False
    value = returned.value
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.And):
        # `dist.is_available() and dist.is_initialized()`: true only where the right side is.
        value = value.right
    return _wrapped_test(value, receiver)


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString)
    )


def _wrapped_test(test: cst.BaseExpression, receiver: str) -> bool:
    if isinstance(test, cst.Call):
        name = call_name(test) or ""
        args = [a.value for a in test.args]
        if name in _PROCESS_GROUP_TESTS and not args:
            return True
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


def backends_named(test: cst.BaseExpression) -> frozenset[Backend]:
    """The backends under which ``test`` is true for certain (empty: none known)."""
    test = read_through(test)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return backends_named(test.left) | backends_named(test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not isinstance(target.operator, (cst.Equal, cst.Is)):
            return frozenset()
        sides = (test.left, target.comparator)
        words = [str(side.evaluated_value) for side in sides if isinstance(side, cst.SimpleString)]
        named = next((side for side in sides if not isinstance(side, cst.SimpleString)), None)
        if named is None:
            return frozenset()
        if _distributed_type(named):  # `== DistributedType.DEEPSPEED`, or the member's value `== "DEEPSPEED"`
            member = words[0].upper() if words else last_attribute(dotted_name(target.comparator) or "") or ""
            return DISTRIBUTED_TYPE_BACKENDS.get(member, frozenset())
        if words and isinstance(target.operator, cst.Equal) and "launcher" not in (dotted_name(named) or "").lower():
            # A program's own choice of engine (`train_engine == "torch_ddp"`); not a launcher's
            # name (the `deepspeed` launcher may run DDP).
            return ENGINE_SWITCH_VALUES.get(words[0].lower(), frozenset())
        return frozenset()
    if isinstance(test, cst.Call):
        # A call is a known flag only (`is_deepspeed_zero3_enabled()`): `is_deepspeed_available()`
        # says DeepSpeed is installed, not that it runs.
        name = dotted_name(test.func)
        return BACKEND_FLAGS.get((last_attribute(name) or name) if name else "", frozenset())
    name = dotted_name(test)
    return backends_of_flag((last_attribute(name) or name) if name else "")


def backends_required(
    test: cst.BaseExpression, value_of: Callable[[str], cst.BaseExpression | None] = lambda name: None
) -> frozenset[Backend] | None:
    """The backends ``test`` can be true under, where it names them (None: any backend):
    ``use_fsdp and step % n == 0`` only under FSDP, ``is_deepspeed or is_fsdp`` only under
    either. ``value_of`` gives the value a plain name was assigned where the test reads it
    (``all_saving = use_deepspeed or use_fsdp`` then ``if all_saving:``), or None."""
    return _required(test, value_of, 0)


def _required(
    test: cst.BaseExpression, value_of: Callable[[str], cst.BaseExpression | None], depth: int
) -> frozenset[Backend] | None:
    test = read_through(test)
    if isinstance(test, cst.Name) and depth < 3:
        value = value_of(test.value)
        if value is not None:
            return _required(value, value_of, depth + 1)
    if isinstance(test, cst.BooleanOperation):
        left, right = _required(test.left, value_of, depth), _required(test.right, value_of, depth)
        if isinstance(test.operator, cst.And):  # each side that names backends narrows them
            return right if left is None else left if right is None else left & right
        return None if left is None or right is None else left | right  # every side must name them
    named = backends_named(test)
    return named or None


def tests_holding_at(node: cst.CSTNode, context: NodeContext) -> list[cst.BaseExpression]:
    """The tests of the ifs of the function (or module) that holds ``node`` whose body holds it:
    true wherever it runs."""
    return [test for test, in_body in _arms_holding(node, context) if in_body]


def backends_required_at(model: SemanticModel, node: cst.CSTNode) -> frozenset[Backend] | None:
    """The backends the code at ``node`` can run under, where the ifs that hold it name them
    (the body of ``if self.is_fsdp_enabled or self.is_deepspeed_enabled:``); None where none does."""
    required: frozenset[Backend] | None = None
    for test in tests_holding_at(node, model.context):
        named = backends_required(test)
        if named is not None:
            required = named if required is None else required & named
    return required


def backends_possible_at(model: SemanticModel, node: cst.CSTNode) -> frozenset[Backend]:
    """:func:`backends_required_at`, less the backends named by the tests whose other arm holds
    ``node`` (the ``else`` of ``if is_deepspeed_zero3_enabled():``): a test false taken to rule
    its backends out, which the launch model does not do (transformers' ``is_fsdp_enabled()`` is
    false under FSDP without CPU-RAM-efficient loading); TRL007 and TRL008 ask it."""
    required = backends_required_at(model, node)
    possible = ANY if required is None else required
    for test, in_body in _arms_holding(node, model.context):
        if not in_body:
            possible = possible - backends_named(test)
    return possible


def _arms_holding(node: cst.CSTNode, context: NodeContext) -> list[tuple[cst.BaseExpression, bool]]:
    """The ifs of the function (or module) that hold ``node``: each test, and whether its body
    (else another arm) holds the node."""
    arms: list[tuple[cst.BaseExpression, bool]] = []
    child: cst.CSTNode = node
    for ancestor in context.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
            arms.append((ancestor.test, child is ancestor.body))
        child = ancestor
    return arms
