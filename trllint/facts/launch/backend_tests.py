"""What the code's own tests say about the backend, and which backends can run a node.

One reading of a single test (no ``not``/``and``/``or``: ``trllint.facts.branches.proves``
combines them) gives the backends possible when it is true and when it is false:

- true exactly under their backends (false: under the others): the Trainer's flags, set from
  the accelerator's state (``self.is_fsdp_enabled``, ``self.is_deepspeed_enabled``),
  transformers' ``is_deepspeed_zero3_enabled()``, accelerate's ``distributed_type`` compared with
  ``FSDP`` or ``DEEPSPEED`` (the only types of those backends), ``state.fsdp_plugin is None``, and
  a program's own switch, named after a backend (``args.use_fsdp``, ``config.is_deepspeed``) or
  compared with a backend's name (``train_engine == "torch_ddp"``): set when the program runs
  under that backend, as the Trainer's flags are;
- true only under their backends, false under any: transformers' ``is_fsdp_enabled()`` (false
  under FSDP unless CPU-RAM-efficient loading is on); TrainingArguments' ``args.fsdp`` and
  ``args.deepspeed`` (empty where ``accelerate launch``'s config chooses the backend);
  ``distributed_type == DistributedType.MULTI_GPU`` (DDP runs as ``MULTI_CPU`` too); and
  ``distributed_type`` equal to another type (``NO``) is true only where neither FSDP nor
  DeepSpeed runs;
- any other test: nothing.

The diffusers examples fixed their ``save_state`` hang under DeepSpeed with ``if
accelerator.is_main_process or accelerator.distributed_type == DistributedType.DEEPSPEED:``: under
the backends such an ``or`` names, every rank enters (``backends_named``). The body of ``if
use_fsdp and ...:`` runs under FSDP only (``backends_required``); the ``else`` of ``if
is_deepspeed_zero3_enabled():`` never under ZeRO-3 (``backends_possible_at``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Callable

import libcst as cst

from trllint.core.cst.names import dotted_name, is_none, last_attribute, read_through
from trllint.facts.branches import Knowledge, holds_at, proves
from trllint.facts.launch.backends import (
    ANY,
    BACKEND_FLAGS,
    DEEPSPEED,
    DISTRIBUTED_TYPE_BACKENDS,
    ENGINE_SWITCH_VALUES,
    Backend,
    backends_of_flag,
)

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

ValueOf = Callable[[str], "cst.BaseExpression | None"]
Leaf = Callable[[cst.BaseExpression], Knowledge]
# The backends possible when a test is true, and when it is false.
Possible = tuple[frozenset[Backend], frozenset[Backend]]
_NOTHING_KNOWN: Possible = (ANY, ANY)
_FSDP = frozenset({Backend.FSDP})
# A call, an argument and DistributedType members whose falsehood proves nothing (see above).
_TRUE_ONLY_CALLS = frozenset({"is_fsdp_enabled"})
_TRUE_ONLY_SWITCHES = frozenset({"fsdp", "deepspeed"})
_EXACT_DISTRIBUTED_TYPES = frozenset({"FSDP", "DEEPSPEED"})
_MAX_VALUE_DEPTH = 3  # names read through their values: `all_saving = use_deepspeed or use_fsdp`


def possible_under(test: cst.BaseExpression) -> Possible:
    """The backends possible when ``test`` (a single test) is true, and when it is false."""
    test = read_through(test)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        return _comparison(test.left, target.operator, target.comparator)
    if isinstance(test, cst.Call):
        name = dotted_name(test.func)
        short = (last_attribute(name) or name) if name else ""
        if short not in BACKEND_FLAGS:
            return _NOTHING_KNOWN
        backends = BACKEND_FLAGS[short]
        return (backends, ANY if short in _TRUE_ONLY_CALLS else ANY - backends)
    name = dotted_name(test)
    short = (last_attribute(name) or name) if name else ""
    backends = backends_of_flag(short)
    if not backends:
        return _NOTHING_KNOWN
    return (backends, ANY if short in _TRUE_ONLY_SWITCHES else ANY - backends)


def _comparison(left: cst.BaseExpression, operator: cst.BaseCompOp, right: cst.BaseExpression) -> Possible:
    if isinstance(operator, (cst.In, cst.NotIn)):
        members = _distributed_type_members(right) if is_distributed_type(left) else None
        if members is None:
            return _NOTHING_KNOWN
        when_in = frozenset().union(*(_of_type(member) for member in members))
        when_not_in = ANY.difference(*(_of_type(member) for member in members & _EXACT_DISTRIBUTED_TYPES))
        return (when_in, when_not_in) if isinstance(operator, cst.In) else (when_not_in, when_in)
    if not isinstance(operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
        return _NOTHING_KNOWN
    equal = _equality(left, right) or _equality(right, left) or _NOTHING_KNOWN
    return equal if isinstance(operator, (cst.Equal, cst.Is)) else (equal[1], equal[0])


def _equality(named: cst.BaseExpression, value: cst.BaseExpression) -> Possible | None:
    """What ``named == value`` says, where ``named`` is what the code tests."""
    if is_distributed_type(named):
        member = _distributed_type_member(value)
        if member is None:
            return None
        return (_of_type(member), ANY - _of_type(member) if member in _EXACT_DISTRIBUTED_TYPES else ANY)
    if (last_attribute(dotted_name(read_through(named)) or "") or "") == "fsdp_plugin" and is_none(value):
        return (ANY - _FSDP, _FSDP)
    if isinstance(value, cst.SimpleString) and "launcher" not in (dotted_name(named) or "").lower():
        # A program's own choice of engine (`train_engine == "torch_ddp"`); not a launcher's
        # name (the `deepspeed` launcher may run DDP).
        backends = ENGINE_SWITCH_VALUES.get(str(value.evaluated_value).lower())
        return (backends, ANY - backends) if backends else None
    return None


def _of_type(member: str) -> frozenset[Backend]:
    """The backends a DistributedType member can be: any but FSDP and DeepSpeed for the types
    the table does not name (``NO``, ``MULTI_CPU``, ``XLA``)."""
    return DISTRIBUTED_TYPE_BACKENDS.get(member, ANY - _FSDP - DEEPSPEED)


def is_distributed_type(node: cst.BaseExpression) -> bool:
    """``node`` reads accelerate's ``distributed_type``."""
    name = dotted_name(node)
    return name is not None and (last_attribute(name) or name) == "distributed_type"


def _distributed_type_member(node: cst.BaseExpression) -> str | None:
    """``FSDP`` for ``DistributedType.FSDP`` or the string ``"FSDP"`` (DistributedType is a str enum)."""
    name = dotted_name(node)
    if name is not None and "." in name and name.rsplit(".", 2)[-2] == "DistributedType":
        return name.rsplit(".", 1)[-1]
    if isinstance(node, cst.SimpleString) and node.prefix == "":
        value = node.evaluated_value
        return value if isinstance(value, str) and value.isidentifier() and value.isupper() else None
    return None


def _distributed_type_members(node: cst.BaseExpression) -> frozenset[str] | None:
    if not isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return None
    members = [_distributed_type_member(e.value) if not isinstance(e, cst.StarredElement) else None for e in node.elements]
    return None if any(m is None for m in members) else frozenset(m for m in members if m is not None)


def rules_out(backend: Backend, value_of: ValueOf | None = None, *, by_falsehood: bool = True) -> Leaf:
    """The leaf of :func:`trllint.facts.branches.proves` for the property "``backend`` is off":
    a single test's reading, and a plain name read through the value it was assigned. Without
    ``by_falsehood`` only what a test says when true counts."""
    if value_of is None:
        return _plain_leaf(backend, by_falsehood)  # one object per question: holds_at caches by it
    return _leaf(backend, value_of, by_falsehood, 0)


@cache
def _plain_leaf(backend: Backend, by_falsehood: bool) -> Leaf:
    return _leaf(backend, None, by_falsehood, 0)


def _leaf(backend: Backend, value_of: ValueOf | None, by_falsehood: bool, depth: int) -> Leaf:
    def leaf(test: cst.BaseExpression) -> Knowledge:
        inner = read_through(test)
        value = value_of(inner.value) if value_of and isinstance(inner, cst.Name) and depth < _MAX_VALUE_DEPTH else None
        if value is not None or inner is not test:
            through = _leaf(backend, value_of, by_falsehood, depth + (value is not None))
            inner = value if value is not None else inner
            return (proves(inner, True, through) or None, proves(inner, False, through) or None)
        when_true, when_false = possible_under(test)
        return (backend not in when_true or None, (by_falsehood and backend not in when_false) or None)

    return leaf


def backends_named(test: cst.BaseExpression) -> frozenset[Backend]:
    """The backends under which ``test`` is true for certain: its falsehood rules them out."""
    return frozenset(b for b in Backend if proves(test, False, rules_out(b)))


def backends_possible_at(
    model: SemanticModel, node: cst.CSTNode, value_of: ValueOf | None = None, *, by_falsehood: bool = True
) -> frozenset[Backend]:
    """The backends the code at ``node`` can run under: those no test on every path to it rules
    out (a branch taken on it, an earlier ``if <test>: return``; ``trllint.facts.branches.holds_at``).
    ``value_of`` gives the value a plain name was assigned where a test reads it, or None;
    ``by_falsehood`` as for :func:`rules_out`."""
    return frozenset(b for b in Backend if not holds_at(model, node, rules_out(b, value_of, by_falsehood=by_falsehood)))
