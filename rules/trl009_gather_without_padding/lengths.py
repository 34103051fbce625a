"""Which tensors may have a different length on each rank (TRL009's fact).

- What ``generate(...)`` returns (or its ``.sequences``, or a slice of it that keeps the sequence
  dimension open, ``out[:, prompt_length:]``): each rank stops where its own batch stopped, and
  its prompts were padded to its own batch's longest. Unless the call fixes the length itself
  (``min_new_tokens`` / ``min_length`` given).
- A masked selection of this rank's data: ``x[mask.bool()]``, ``x[x > 0]``, ``x[mask]`` with
  ``mask`` assigned a comparison, ``torch.masked_select(x, m)``, ``x.nonzero()``: as long as the
  count of true entries in this rank's batch.

- A model's logits the code reaches by a name it cannot follow (unpacked from a forward helper's
  result, ``outputs.logits``, a parameter) in a file of token sequences (it reads ``input_ids``):
  ``[batch, sequence, vocab]``, the sequence as long as this rank's batch padded to its own
  longest, unless the loader pads every batch to one length, which the file does not show (an
  unproven kind).

Shape-keeping methods (``.cpu()``, ``.detach()``, ``.to(...)``...) keep the length; names are
followed to the assignment the reading statement sees (``trllint.facts.bindings``). Anything
else (a pad, a helper's result, a loop variable) is unknown and says nothing.
"""

from __future__ import annotations

import enum

import libcst as cst

from trllint.core.cst.names import argument, call_name, dotted_name, last_attribute
from dataclasses import dataclass
from trllint.facts.bindings import bound_value
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank
from trllint.semantic.model import SemanticModel

# Methods that return a tensor of the same shape (the length stays what it was).
SHAPE_KEEPING = frozenset(
    {"cpu", "cuda", "to", "detach", "clone", "contiguous", "long", "int", "float", "half", "bfloat16", "double"}
)
# generate() arguments that make every row the same length.
_FIXED_LENGTH_ARGUMENTS = ("min_new_tokens", "min_length")
# Receivers whose generate() returns request outputs (vLLM, a server client), not a tensor.
_SERVERS = ("llm", "client", "engine", "server")
_SELECTIONS = frozenset({"masked_select", "nonzero", "argwhere"})
_MAX_DEPTH = 8


class Varies(enum.Enum):
    GENERATED = "generated"  # along dimension 1: the sequence
    SELECTED = "selected"  # along dimension 0: a masked selection
    LOGITS = "logits"  # along dimension 1, unless the loader pads to one length: not shown


@dataclass(frozen=True)
class VaryingLength:
    how: Varies
    made_by: cst.BaseExpression  # the generate(...) call or the selection
    generate: cst.Call | None = None


class LengthFacts:
    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        # A file with a generate() of its own (nanoGPT's sampler, a wrapper's): what it returns is
        # that code's business, not transformers' stop-early generation.
        self._defines_generate = any(f.name.value == "generate" for f in model.definitions.functions)
        self._token_sequences = "input_ids" in model.source.text

    def varying_length(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> VaryingLength | None:
        """How ``expr`` (read at ``at``) may have a different length on each rank, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = dotted_name(expr)
            bound = bound_value(self.model, name, at) if name is not None else None
            if bound is not None:
                return self.varying_length(bound.value, bound.statement, depth + 1)
            if isinstance(expr, cst.Attribute) and expr.attr.value == "sequences":
                inner = self.varying_length(expr.value, at, depth + 1)
                return inner if inner is not None and inner.how is Varies.GENERATED else None
            # A plain name only: `outputs.logits` is as often a classifier's or a reward head's
            # `[batch, labels]`, whose length every rank shares.
            if self._token_sequences and isinstance(expr, cst.Name) and expr.value.endswith("logits"):
                return VaryingLength(Varies.LOGITS, expr)
            return None
        if isinstance(expr, cst.Call):
            return self._call(expr, at, depth)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, at, depth)
        return None

    def _call(self, call: cst.Call, at: cst.CSTNode, depth: int) -> VaryingLength | None:
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else last_attribute(call_name(call))
        if method == "generate" and isinstance(func, cst.Attribute):
            if any(argument(call, name) is not None for name in _FIXED_LENGTH_ARGUMENTS):
                return None
            if self._fixes_length_in_kwargs(call, at) or _served_elsewhere(func.value) or self._defines_generate:
                return None
            return VaryingLength(Varies.GENERATED, call, call)
        if method in SHAPE_KEEPING and isinstance(func, cst.Attribute):
            return self.varying_length(func.value, at, depth + 1)
        if method in _SELECTIONS:
            selected = func.value if isinstance(func, cst.Attribute) and call_name(call) not in (
                "torch.masked_select", "torch.nonzero", "torch.argwhere"
            ) else (call.args[0].value if call.args else None)
            if selected is not None and self._per_rank(selected, at):
                return VaryingLength(Varies.SELECTED, call)
        return None

    def _fixes_length_in_kwargs(self, call: cst.Call, at: cst.CSTNode) -> bool:
        """``generate(**gen_kwargs)`` with ``gen_kwargs = {"min_new_tokens": n, ...}``."""
        for arg in call.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                bound = bound_value(self.model, arg.value.value, at)
                value = bound.value if bound is not None else None
                keys = _keys(value) if value is not None else set()
                if keys & set(_FIXED_LENGTH_ARGUMENTS):
                    return True
        return False

    def _subscript(self, subscript: cst.Subscript, at: cst.CSTNode, depth: int) -> VaryingLength | None:
        elements = subscript.slice
        inner = self.varying_length(subscript.value, at, depth + 1)
        if inner is not None and inner.how is Varies.GENERATED:
            # out[:, n:], out[i:j]: every dimension sliced, the sequence's left open at its end.
            if all(isinstance(e.slice, cst.Slice) for e in elements) and (
                len(elements) < 2 or elements[1].slice.upper is None  # type: ignore[union-attr]
            ):
                return inner
            return None
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            mask = elements[0].slice.value
            if self._is_mask(mask, at, depth) and (self._per_rank(subscript.value, at) or self._per_rank(mask, at)):
                return VaryingLength(Varies.SELECTED, subscript)
        return None

    def _is_mask(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        if isinstance(expr, cst.Comparison):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._is_mask(expr.expression, at, depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value == "bool":
                return True
            if expr.func.attr.value == "to" and expr.args and dotted_name(expr.args[0].value) == "torch.bool":
                return True
        if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
            bound = bound_value(self.model, expr.value, at)
            return bound is not None and self._is_mask(bound.value, bound.statement, depth + 1)
        return False

    def _per_rank(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        context = self.model.context
        scope = context.enclosing_function(at) or self.model.source.module
        try:
            return rank_flows(self.model).flow(scope).state(expr, context.enclosing_statement(at)) == Rank.PER_RANK
        except RecursionError:
            return False


def _keys(value: cst.BaseExpression) -> set[str]:
    """The string keys of a dict display or the keywords of ``dict(...)``."""
    if isinstance(value, cst.Dict):
        return {e.key.evaluated_value for e in value.elements if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)}  # type: ignore[misc]
    if isinstance(value, cst.Call) and call_name(value) == "dict":
        return {a.keyword.value for a in value.args if a.keyword is not None}
    return set()


def _served_elsewhere(receiver: cst.BaseExpression) -> bool:
    """``llm.generate(...)`` (vLLM), ``client.generate(...)``: lists of outputs, not token-id tensors."""
    name = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in _SERVERS)
