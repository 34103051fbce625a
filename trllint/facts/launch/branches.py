"""Branches that settle whether a model is wrapped at a node.

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
model is bare, and reading a model member there is correct. For a model ``accelerator.prepare``
wrapped, a test that an accelerator exists (``if accelerator:``) says wrapped too, taking the code at
its word that without one nothing was prepared; an accelerator handed in as a parameter counts
only where every call of the function in the file hands one.

A test may also say bare when it holds: one process (``num_processes == 1``), or the model an
instance of a class no wrapper is (``isinstance(model, PeftModel)``, ``isinstance(self.model,
dict)``); the model is bare on that arm.

What a test says of the backend is ``trllint.facts.launch.backend_tests``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from trllint.core.cst.names import ImportMap, call_name, dotted_name, is_none, last_attribute, parameter_names
from trllint.facts.accelerators import is_accelerator
from trllint.facts.branches import Knowledge, holds_at
from trllint.facts.launch.backend_tests import is_distributed_type
from trllint.facts.rank_flow import rank_flows

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

WRAPPER_CLASSES = frozenset(
    {"DistributedDataParallel", "DDP", "DataParallel", "FullyShardedDataParallel", "FSDP", "DeepSpeedEngine", "PipelineEngine"}
)
# A process group exists: true wherever DDP wraps (DistributedDataParallel needs one).
_PROCESS_GROUP_TESTS = frozenset({"dist.is_initialized", "torch.distributed.is_initialized"})
_PROCESS_COUNTS = ("num_processes", "world_size", "n_gpu", "num_gpus", "_n_gpu", "WORLD_SIZE")


def unwrapped_at(model: SemanticModel, read: cst.BaseExpression, prepared: bool = False) -> bool:
    """The model expression ``read`` (``model`` in ``model.generate``) is bare here: it sits where
    a test that says wrapped is false (the shared branch walk of ``trllint.facts.branches``, asked
    of the property "bare"). ``prepared``: the model is wrapped by ``accelerator.prepare``, which
    needs an accelerator, so a test that one exists says wrapped too
    (``if accelerator: ... else: model.generate(...)``)."""
    receiver = model.source.module.code_for_node(read)
    functions = {f.name.value: f for f in model.source.module.body if isinstance(f, cst.FunctionDef)}

    def bare(test: cst.BaseExpression) -> Knowledge:
        # Bare when true (one process), bare when false (a test every wrapped model passes).
        exists = _accelerator_exists_test(test, model) if prepared else None
        wrapped = exists is True or _wrapped_test(test, receiver) or _returns_a_wrapped_test(test, functions, receiver)
        bare_when_true = exists is False or _bare_test(test, receiver, model.imports)
        return (True if bare_when_true else None, True if wrapped else None)

    return holds_at(model, read, bare)


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
        if is_distributed_type(left) and isinstance(operator, (cst.NotEqual, cst.IsNot)):
            return (last_attribute(dotted_name(right) or "") or "") == "NO"
    return False


def _accelerator_exists_test(test: cst.BaseExpression, model: SemanticModel) -> bool | None:
    """True for a test true only where an accelerator exists (``accelerator``, ``accelerator is not
    None``), False for one true only where none does (``accelerator is None``), else None. An
    accelerator handed in as a parameter counts only where every call of the function in the file
    hands it one: a caller that leaves it out may still pass a prepared model."""
    tested, exists = test, True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not is_none(target.comparator) or not isinstance(target.operator, (cst.Is, cst.IsNot)):
            return None
        tested, exists = test.left, isinstance(target.operator, cst.IsNot)
    if not isinstance(tested, (cst.Name, cst.Attribute)) or not is_accelerator(tested, model.context):
        return None
    function = model.context.enclosing_function(test)
    if isinstance(tested, cst.Name) and function is not None and tested.value in parameter_names(function.params):
        passed = rank_flows(model).passed_arguments(function, tested.value)
        if passed is None or not all(a is not None and is_accelerator(a, model.context) for a in passed):
            return None
    return exists


def _bare_test(test: cst.BaseExpression, receiver: str, imports: ImportMap) -> bool:
    """``test`` true only when the model is bare: one process, or the name holds an object of a
    class no wrapper is: a container (``isinstance(self.model, dict)``: a trainer that keeps
    several models in a dict wraps each entry, and the dict itself is no wrapper) or a model class
    (``isinstance(model, PeftModel)``, as transformers' ``compute_loss`` tests before it reads
    ``model.base_model``)."""
    if isinstance(test, cst.Call) and call_name(test) == "isinstance" and len(test.args) == 2:
        first, classes = test.args[0].value, test.args[1].value
        return _is(first, receiver) and _names_no_wrapper_class(classes, imports)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left, right, operator = test.left, target.comparator, target.operator
        if _process_count(left) and isinstance(right, cst.Integer) and int(right.value) == 1:
            return isinstance(operator, (cst.Equal, cst.LessThanEqual))
        if is_distributed_type(left) and isinstance(operator, (cst.Equal, cst.Is)):
            return (last_attribute(dotted_name(right) or "") or "") == "NO"
    return False


def _is(node: cst.BaseExpression, receiver: str) -> bool:
    return dotted_name(node) == receiver


# Containers (Python's, typing's, torch's): an object that is one may hold models, and is no
# wrapper itself.
_CONTAINERS = frozenset({"dict", "list", "tuple", "Mapping", "MutableMapping", "Sequence", "ModuleDict", "ModuleList"})
# Classes a wrapper is an instance of (torch.compile's OptimizedModule holds accelerate's DDP):
# a test for them says nothing of the wrapper.
_WRAPPERS_ARE = frozenset({"Module", "object", "Callable", "OptimizedModule"})
# Words of a class's name, or of the module it is imported from, that may make it a wrapper
# (`MyDDP(DistributedDataParallel)`, `DistributedDataParallel as Parallel`, Megatron's
# `Float16Module`, SageMaker's `DistributedModel`).
_WRAPPER_WORDS = ("dataparallel", "ddp", "fsdp", "engine", "wrapper", "wrapped", "distributed", "parallel", "deepspeed")


def _names_no_wrapper_class(classes: cst.BaseExpression, imports: ImportMap) -> bool:
    """``classes`` (an ``isinstance`` second argument) names only classes no wrapper is an instance
    of: a container, or a class by a CamelCase name (not a constant that may hold wrappers, as
    `WRAPPERS = (DDP, DataParallel)`) that is no wrapper, none of the classes every wrapper is,
    no other module class (`...Module`) and spells no word of a wrapper, nor does its import."""
    names = _class_names(classes)
    return bool(names) and all(name in _CONTAINERS or _no_wrapper_class(name, imports) for name in names)


def _no_wrapper_class(name: str, imports: ImportMap) -> bool:
    last = last_attribute(name) or name
    camel_case = last[:1].isupper() and any(c.islower() for c in last)
    full = (imports.resolve(name) or name).lower()
    return (
        camel_case
        and last not in WRAPPER_CLASSES
        and last not in _WRAPPERS_ARE
        and not last.endswith("Module")
        and not any(word in full for word in _WRAPPER_WORDS)
    )


def _names_wrappers(classes: cst.BaseExpression) -> bool:
    """``classes`` (an ``isinstance`` second argument) names a wrapper."""
    return any((last_attribute(name) or name) in WRAPPER_CLASSES for name in _class_names(classes))


def _class_names(classes: cst.BaseExpression) -> list[str]:
    """The dotted name of each class ``classes`` names (one, or a tuple of them); "" for one that
    is no plain name (``type(x)``)."""
    if isinstance(classes, (cst.Tuple, cst.List)):
        return [name for element in classes.elements for name in _class_names(element.value)]
    return [dotted_name(classes) or ""]


def _process_count(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call) and (call_name(node) or "").endswith("get_world_size"):
        return True
    name = dotted_name(node)
    return name is not None and (last_attribute(name) or name) in _PROCESS_COUNTS


