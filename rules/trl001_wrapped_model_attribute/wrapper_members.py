"""What a DDP or DataParallel wrapper answers itself, and which reads through one fail.

``DistributedDataParallel`` and ``DataParallel`` are ``nn.Module``s that hold the model as
``.module`` and forward only the call: a read of anything their classes and ``nn.Module`` do not
define (a submodule ``model.decoder``, a method ``model.decode_code()``, a plain attribute
``model.in_channels``) raises ``AttributeError``. The names they define are data
(``wrapper_members.toml``, written from the installed torch by ``scripts/wrapper_members.py``).
A DeepSpeed engine and FSDP forward unknown attributes to the module: they are not asked here.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.facts.wrapping import ACCELERATE, Wrapping
from trllint.semantic.context import methods_of
from trllint.semantic.model import SemanticModel
from trllint.rules.trl001_wrapped_model_attribute.binding_records import WrappingFacts

TABLE = Path(__file__).with_name("wrapper_members.toml")

DATA_PARALLEL_CLASS = "DataParallel"
DDP_CLASS = "DistributedDataParallel"

# Library functions that read a member of the model handed to them (their first argument or
# `model=`), which DDP and DataParallel do not forward, by (package, function name): peft's
# state-dict helpers read the PEFT model's `peft_config` (exported from `peft` and `peft.utils`).
MEMBER_READ_BY_LIBRARY = {
    ("peft", "get_peft_model_state_dict"): "peft_config",
    ("peft", "set_peft_model_state_dict"): "peft_config",
}


def member_read_by(function: str | None) -> str | None:
    """The member of its model argument that the library function ``function`` (a full name) reads."""
    if function is None or "." not in function:
        return None
    return MEMBER_READ_BY_LIBRARY.get((function.split(".", 1)[0], function.rsplit(".", 1)[1]))


@cache
def _table() -> dict[str, frozenset[str]]:
    with TABLE.open("rb") as handle:
        rows = tomllib.load(handle)
    return {name: frozenset(members) for name, members in rows.items()}


def answered_by(wrapping: Wrapping) -> frozenset[str]:
    """The attributes a read through this wrapping finds on the wrapper itself. accelerate's
    multi-process wrapper is DDP; a wrapping whose class is not known (inherited from another
    module) answers what either does."""
    table = _table()
    wrapper = DDP_CLASS if wrapping.kind == ACCELERATE else wrapping.wrapper
    if wrapper == DATA_PARALLEL_CLASS:
        return table["module"] | table["data-parallel"]
    if wrapper == DDP_CLASS:
        return table["module"] | table["distributed-data-parallel"]
    return table["module"] | table["data-parallel"] | table["distributed-data-parallel"]


def through(wrapping: Wrapping) -> str:
    """How a message names the wrapper: the call that made it, and for accelerate, what it is."""
    if wrapping.kind == ACCELERATE:
        return f"{wrapping.origin} (DDP on several processes)"
    return wrapping.origin


def is_written(model: SemanticModel, read: cst.Attribute) -> bool:
    """``model.x = ...``, ``model.x += ...``, ``del model.x``: the wrapper gets its own attribute."""
    parent = model.context.parent(read)
    if isinstance(parent, cst.AssignTarget) and parent.target is read:
        return True
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is read:
        return True
    if isinstance(parent, (cst.Tuple, cst.List, cst.Element)):
        return any(isinstance(a, cst.AssignTarget) for a in model.context.ancestors(read))
    return isinstance(parent, cst.Del)


def written_on_wrapper(model: SemanticModel, facts: WrappingFacts, receiver: str) -> frozenset[str]:
    """The attributes the file sets on ``receiver`` while it holds the wrapper (``model.step_count = 0``
    after the wrap): the wrapper has them. One set on the bare model before the wrap
    (``model.names = classes`` then ``model = DDP(model)``) is the model's own, which the wrapper
    does not forward. The binding pass met every such write as a read of a wrapped model."""

    def compute() -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for node, _ in facts.other_reads.values():
            owner = dotted_name(node.value)
            if owner is not None and is_written(model, node):
                found.setdefault(owner, set()).add(node.attr.value)
        return found

    return frozenset(model.once((written_on_wrapper,), compute).get(receiver, ()))


def defined_by_own_class(model: SemanticModel, wrapping: Wrapping, member: str) -> cst.ClassDef | None:
    """The file's own ``nn.Module`` class the wrapped object is an instance of
    (``model = StableDiffusionWrapper(...)`` before the prepare), when that class defines ``member``
    itself: a method, or an attribute its methods set on ``self``. The object is then a module,
    and the member one the wrapper does not forward."""
    if wrapping.instance_of is None:
        return None
    found = None
    for statement in model.source.module.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == wrapping.instance_of:
            found = statement  # a later class of the name wins, as Python binds it
    if found is None:
        return None
    if member in methods_of(found) or f"self.{member}" in model.class_facts(found).names_assigned:
        return found
    return None


def runs_outside_the_wrapper(model: SemanticModel, read: cst.Attribute) -> cst.BaseExpression | None:
    """What the read calls, when that runs the model's code outside the wrapper's forward:
    ``model.decode(x)``, ``model.backbone(x)``, ``model.backbone.encode(x)``; not an ``nn.Module``
    method of a submodule (``model.backbone.parameters()``). None when nothing such is called."""
    child: cst.BaseExpression = read
    parent = model.context.parent(read)
    while isinstance(parent, cst.Attribute) and parent.value is child:
        child, parent = parent, model.context.parent(parent)
    if not (isinstance(parent, cst.Call) and parent.func is child):
        return None
    if child is not read and isinstance(child, cst.Attribute):
        name = child.attr.value
        if name in _table()["module"] and name not in ("forward", "__call__", "_call_impl"):
            return None
    return child


def in_an_else_arm(model: SemanticModel, read: cst.Attribute) -> bool:
    """The read sits in the ``else`` of an ``if`` or a conditional expression in its function:
    after a wrap in a branch, that is where code handles the bare model."""
    child: cst.CSTNode = read
    for ancestor in model.context.ancestors(read):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.If) and child is ancestor.orelse:
            return True
        if isinstance(ancestor, cst.IfExp) and child is ancestor.orelse:
            return True
        child = ancestor
    return False
