"""TRL009 gather-without-padding: a tensor whose length differs by rank, gathered as is.

``accelerator.gather`` and ``gather_for_metrics`` all-gather a tensor of one shape from every
rank. Generated token ids (each rank stops, and pads its prompts, at its own batch's length) or a
masked selection of this rank's data have another length on each rank: gloo aborts on the size
mismatch, NCCL hangs or mixes the rows. ``accelerator.pad_across_processes`` first makes the
lengths equal (a no-op on one process).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst.names import argument, call_name, is_true, matches, parameters
from trllint.core.findings import Evidence, Fix, ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import MULTI_PROCESS
from trllint.facts.launch.model import launch_of
from trllint.facts.distributed import DISTRIBUTED_MARKERS
from trllint.rule.base import AllOf, AnyOf, Calls, FindingKind, Rule
from trllint.semantic.context import CONTEXT_METADATA
from trllint.semantic.model import SemanticModel, names_assigned_by, names_assigned_in

from .lengths import LengthFacts, Varies, VaryingLength

GATHER_FUNCTIONS = ("accelerate.utils.gather", "accelerate.utils.operations.gather")
# The accelerator methods that all-gather a tensor.
GATHER_METHODS = frozenset({"gather", "gather_for_metrics"})
# Where a script keeps the tokenizer whose pad id generate padded with.
TOKENIZER_NAMES = ("tokenizer", "self.tokenizer", "self.processing_class", "processing_class")


class Unsafe(ReasonKind):
    PAD_ID = (
        "the rows of the ranks that stopped earlier now end in `{pad}` tokens: right where the code that reads "
        "the gathered ids skips that id (skip_special_tokens=True, a pad mask), as it skips generate's own padding"
    )
    PAD_ZERO = (
        "no pad id is in scope: the rows of the ranks that stopped earlier now end in token id 0, which may be a "
        "real token; pass pad_index=<the tokenizer's pad_token_id>"
    )


class GatherWithoutPadding(Rule):
    code = "TRL009"
    name = "gather-without-padding"
    message = (
        "tensor whose length differs by rank gathered without padding: gloo aborts on the size mismatch and NCCL "
        "hangs; pad it first: accelerator.pad_across_processes(x, dim=1, pad_index=tokenizer.pad_token_id)"
    )
    fixable = "sometimes"
    kinds = {
        "uneven-gather": FindingKind("a gather of a tensor whose length the code shows differs by rank"),
        "sequence-logits": FindingKind(
            "a gather of a model's logits whole, whose sequence length differs by rank unless the loader pads "
            "to one length",
            unproven=True,
        ),
    }
    # Last, the code's own calls: every finding is an argument of a gather (an aliased import of
    # accelerate's `gather` is a call of `gather` too).
    prefilter = AllOf(
        AnyOf(*DISTRIBUTED_MARKERS),
        AnyOf("gather"),
        AnyOf(Calls(*GATHER_METHODS)),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        lengths = LengthFacts(model)
        for call in calls_in(model):
            accelerator = self._gathering_accelerator(call)
            if accelerator is None:
                continue
            gathered = argument(call, "tensor", 0) or argument(call, "input_data", 0)
            if gathered is None:
                continue
            for element in _elements(gathered.value):
                varying = lengths.varying_length(element, call)
                launch = launch_of(model, call) if varying is not None else None
                if varying is not None and launch is not None and launch.multi_process:
                    self._report(call, element, varying, accelerator, launch.shown(MULTI_PROCESS))

    def _gathering_accelerator(self, call: cst.Call) -> str | None:
        """The accelerator's text for ``accelerator.gather(...)`` / ``gather_for_metrics(...)``,
        ``""`` for accelerate's ``gather`` function, None for any other call."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in GATHER_METHODS:
            use_object = argument(call, "use_gather_object", 1)
            if use_object is not None and is_true(use_object.value):
                return None  # gathers Python objects of any size
            return self._code(func.value) if is_accelerator(func.value, self.model.context) else None
        if isinstance(func, cst.Name) and matches(self.model.imports.resolve(call_name(call)), *GATHER_FUNCTIONS):
            return ""
        return None

    def _report(
        self,
        call: cst.Call,
        element: cst.BaseExpression,
        varying: VaryingLength,
        accelerator: str,
        launched: tuple[Evidence, ...],
    ) -> None:
        label = self._code(call.func)
        pad_call = f"{accelerator or 'accelerate.utils'}.pad_across_processes"
        pad = self._pad_id(varying.generate, call) if varying.generate is not None else None
        if varying.how is Varies.GENERATED:
            what = f"token ids from `{self._short(varying.made_by)}`, whose length differs by rank (each rank stops, and pads its prompts, at its own batch's longest)"
            remedy = f"pad them first: {pad_call}(x, dim=1, pad_index={pad or 'tokenizer.pad_token_id'})"
        elif varying.how is Varies.LOGITS:
            what = (
                f"`{self._code(varying.made_by)}`, a model's logits whole: their sequence length is each rank's "
                "batch padded to its own longest unless the loader pads to one length"
            )
            remedy = f"gather each rank's reduction (x.mean()) instead, or pad first: {pad_call}(x, dim=1)"
        else:
            what = f"`{self._code(varying.made_by)}`, a masked selection whose length differs by rank"
            remedy = f"pad it first with a value you drop after the gather: {pad_call}(x, dim=0, pad_index=<sentinel>)"
        message = f"{label} of {what}: gloo aborts on the size mismatch and NCCL hangs or mixes rows; {remedy}"
        evidence = launched
        made_line, gather_line = self._line_of(varying.made_by), self._line_of(call)
        if made_line != gather_line:
            said = "its length is this rank's own" if varying.how is Varies.SELECTED else "generate returns this rank's own length"
            evidence = (Evidence(self.source.display_path, made_line, said), *launched)
        fix = self._pad_fix(element, accelerator, pad) if varying.how is Varies.GENERATED else None
        kind = "sequence-logits" if varying.how is Varies.LOGITS else "uneven-gather"
        self.report(element, message, fix=fix, evidence=evidence, kind=kind)

    def _pad_fix(self, element: cst.BaseExpression, accelerator: str, pad: str | None) -> Fix | None:
        """``accelerator.pad_across_processes(x, dim=1, pad_index=<pad>)`` in place of ``x``; none
        for accelerate's ``gather`` function (no accelerator to pad with)."""
        if not accelerator or _moves_to_cpu(element):
            return None  # a CPU tensor: NCCL could pad and gather it no better than gather it
        pad_argument = f", pad_index={pad}" if pad else ""
        padded = cst.parse_expression(
            f"{accelerator}.pad_across_processes({self.source.module.code_for_node(element)}, dim=1{pad_argument})"
        )
        reason = Unsafe.PAD_ID.text(pad=pad) if pad else Unsafe.PAD_ZERO.text()
        return self.fix(self.replace(element, padded), reason=reason)

    def _pad_id(self, generate: cst.Call, gather: cst.Call) -> str | None:
        """The pad id ``generate`` padded with, as the code at the gather can name it: the call's
        own ``pad_token_id=`` (in the same function), else a tokenizer's ``pad_token_id``."""
        context = self.model.context
        function = context.enclosing_function(gather)
        given = argument(generate, "pad_token_id")
        if given is not None and context.enclosing_function(generate) is function:
            if isinstance(given.value, (cst.Name, cst.Attribute, cst.Integer)):
                return self._code(given.value)
        scope_names = set(names_assigned_in(function) if function is not None else ())
        scope_names |= {p.name.value for p in parameters(function.params)} if function is not None else set()
        module_names = names_assigned_by(self.model.assignments)  # the file's, from the shared walk
        cls = context.enclosing_class(gather)
        class_names = self.model.class_facts(cls).names_assigned if cls is not None else frozenset()
        for name in TOKENIZER_NAMES:
            if name in scope_names or (name.startswith("self.") and name in class_names) or (
                "." not in name and name in module_names
            ):
                return f"{name}.pad_token_id"
        return None

    def _code(self, node: cst.CSTNode) -> str:
        return " ".join(self.source.module.code_for_node(node).split())

    def _short(self, call: cst.BaseExpression) -> str:
        return f"{self._code(call.func)}(...)" if isinstance(call, cst.Call) else self._code(call)

    def _line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line


def _moves_to_cpu(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu":
        return True
    return any(_moves_to_cpu(child) for child in node.children)


def _elements(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a gather of ``value`` gathers one by one: a tuple's, list's or dict display's values."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return [e.value for e in value.elements]
    if isinstance(value, cst.Dict):
        return [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    return [value]
