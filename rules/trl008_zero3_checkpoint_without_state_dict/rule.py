"""TRL008 zero3-checkpoint-without-state-dict: ``save_pretrained`` of a ZeRO-3 model with no gathered state dict.

Under DeepSpeed ZeRO-3 each parameter of the model holds a placeholder of shape ``[0]``; the
weights live in the engine's partitions. ``accelerator.unwrap_model(model).save_pretrained(out)``
(or ``engine.module.save_pretrained(out)``) reads the placeholders: a checkpoint of a few
kilobytes that ``from_pretrained`` refuses with size mismatches. ``state_dict=
accelerator.get_state_dict(model)`` gathers the partitions first (a collective: every rank calls it).
``torch.save(engine.module.state_dict(), path)`` writes the same placeholders.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst.names import argument
from trllint.core.findings import Evidence, ReasonKind
from trllint.facts.rank_split import rank_divergence
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import DEEPSPEED, Backend
from trllint.facts.launch.backend_tests import backends_possible_at
from trllint.facts.launch.model import launch_of
from trllint.facts.partitioning import backends_sharding
from trllint.facts.ranks import main_only_decorator
from trllint.facts.unwrapping import params_gathered_at
from trllint.rule.base import AllOf, AnyOf, Calls, Edit, FindingKind, Fix, Reads, Rule
from trllint.semantic.context import CONTEXT_METADATA
from trllint.semantic.model import SemanticModel

from .held_modules import HeldModule, held_module, saved_state_dict

ZERO3 = frozenset({Backend.ZERO3})
MAX_LINE = 120  # a longer line of arguments gets the new keywords on lines of their own
_GATHER_FLAG_SET = re.compile(r"""zero3_save_16bit_model\s*=\s*True|["']stage3_gather_16bit_weights_on_model_save["']\s*:\s*True""")


class Unsafe(ReasonKind):
    """The fact the fix stands on that the linter cannot prove."""

    GATHER_FLAG = (
        "accelerator.get_state_dict raises under ZeRO-3 unless the DeepSpeed config sets "
        "stage3_gather_16bit_weights_on_model_save (zero3_save_16bit_model in an accelerate config); "
        "no launch config read says it does"
    )


class Zero3CheckpointWithoutStateDict(Rule):
    code = "TRL008"
    name = "zero3-checkpoint-without-state-dict"
    message = (
        "save_pretrained of a model DeepSpeed ZeRO-3 partitions, with no state_dict=: it writes the "
        "parameters' empty placeholders; pass state_dict=accelerator.get_state_dict(model)"
    )
    fixable = "sometimes"
    kinds = {
        "zero3-launch": FindingKind("a model a launch of the project shows partitioned by ZeRO-3"),
        "zero3-state-dict": FindingKind(
            "the state_dict() of a model a launch shows partitioned by ZeRO-3, written by torch.save or the like"
        ),
        "deepspeed-stage-unknown": FindingKind(
            "a model DeepSpeed holds where no launch says the ZeRO stage, or a save that forwards **kwargs",
            unproven=True,
        ),
    }
    # Last, the code itself: a save_pretrained or a state_dict call on an unwrapped model (a call
    # of unwrap_model) or on `x.module`.
    prefilter = AllOf(
        AnyOf("save_pretrained", "state_dict"),
        AnyOf("unwrap_model", ".module"),
        AnyOf(Calls("save_pretrained", "state_dict")),
        AnyOf(Calls("unwrap_model"), Reads("module")),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        for call in calls_in(model):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "save_pretrained":
                self._check_save_pretrained(call, func)
                continue
            state_dict = saved_state_dict(model, call)
            if state_dict is not None:
                self._check_saved_state_dict(call, state_dict)

    def _check_save_pretrained(self, call: cst.Call, func: cst.Attribute) -> None:
        if argument(call, "state_dict", 2) is not None:
            return
        forwarded = [a for a in call.args if a.star == "**"]
        if forwarded and not all(self._own_keywords(call, a.value) for a in forwarded):
            return  # a state dict may be passed through **kwargs built here
        held = held_module(self.model, func.value, call)
        if held is None or not self._partitioned(held) or self._params_whole_here(call):
            return
        self._check(call, held.unwrap, forwards_keywords=bool(forwarded))

    def _check_saved_state_dict(self, save: cst.Call, state_dict: cst.Call) -> None:
        assert isinstance(state_dict.func, cst.Attribute)  # saved_state_dict's `m.state_dict()`
        receiver = state_dict.func.value
        held = held_module(self.model, receiver, state_dict)
        if held is None or not self._partitioned(held) or self._params_whole_here(save):
            return
        decided = self._kind(save, "zero3-state-dict")
        if decided is None:
            return
        kind, evidence = decided
        module = self._code(receiver)
        message = (
            f"{self._code(save.func)} of {module}.state_dict() under DeepSpeed ZeRO-3: it holds this rank's empty "
            "parameter placeholders, not the weights; gather them on every rank first "
            "(accelerator.get_state_dict(engine), or deepspeed.zero.GatheredParameters(params, modifier_rank=0))"
        )
        self.report(save, self._noted(message, kind), evidence=evidence, kind=kind)

    def _partitioned(self, held: HeldModule) -> bool:
        """ZeRO-3 may partition the module: not one no DeepSpeed engine holds and no zero.Init
        built (its weights are whole)."""
        unwrap = held.unwrap
        return unwrap is None or Backend.ZERO3 in backends_sharding(self.model, unwrap.args[0].value, unwrap)

    def _own_keywords(self, call: cst.Call, spread: cst.BaseExpression) -> bool:
        """``**kwargs`` is the enclosing function's own ``**`` parameter: its callers' options,
        which the function's own code never fills with a state dict."""
        function = self.model.context.enclosing_function(call)
        star = function.params.star_kwarg if function is not None else None
        return isinstance(spread, cst.Name) and isinstance(star, cst.Param) and star.name.value == spread.value

    # ---- which model: one whose parameters ZeRO-3 partitions ---------------------------------

    def _params_whole_here(self, call: cst.Call) -> bool:
        """The call runs where ZeRO-3 is known off (a backend test's other arm) or where the
        parameters are gathered (``with deepspeed.zero.GatheredParameters(...):``)."""
        return params_gathered_at(self.model, call) or Backend.ZERO3 not in backends_possible_at(self.model, call)

    # ---- the finding and its fix ------------------------------------------------------------

    def _kind(self, call: cst.Call, proven: str) -> tuple[str, tuple[Evidence, ...]] | None:
        """The kind of a finding at ``call`` and its evidence: ``proven`` where a launch shows
        ZeRO-3; the unproven kind where one shows DeepSpeed without its stage; None otherwise
        (nothing says DeepSpeed, or the launches rule ZeRO-3 out)."""
        launch = launch_of(self.model, call)
        shown = launch.shown(ZERO3)
        if shown:
            return proven, shown
        # A fact that allows DeepSpeed only, ZeRO-3 among its stages (a test of the plugin, an
        # engine built from a config it does not spell): the stage is all that is unknown.
        deepspeed = tuple(
            evidence
            for fact in launch.facts
            if Backend.ZERO3 in fact.backends and fact.backends <= DEEPSPEED
            for evidence in fact.evidence
        )
        if deepspeed and launch.possible(ZERO3):
            return "deepspeed-stage-unknown", tuple(dict.fromkeys(deepspeed))
        return None

    def _noted(self, message: str, kind: str) -> str:
        if kind == "deepspeed-stage-unknown":
            return f"{message} (DeepSpeed runs this code; no launch config or script says its ZeRO stage)"
        return message

    def _check(self, call: cst.Call, unwrap: cst.Call | None, *, forwards_keywords: bool = False) -> None:
        decided = self._kind(call, "zero3-launch")
        if decided is None:
            # Nothing says DeepSpeed: on the dev split no finding made where no launch showed
            # ZeRO-3 was real, so unknown is silent here.
            return
        kind, shown = decided
        if forwards_keywords:
            kind = "deepspeed-stage-unknown"  # a caller may pass state_dict= through them
        message = self.message
        if unwrap is None:
            message = (
                "save_pretrained of the model a DeepSpeed ZeRO-3 engine partitions, with no state_dict=: it "
                "writes the parameters' empty placeholders; gather them first (accelerator.get_state_dict(engine), "
                "or save inside deepspeed.zero.GatheredParameters(..., modifier_rank=0) on every rank)"
            )
        fix = None
        if unwrap is not None:
            guard = self._rank_guard(call)
            if guard is not None:
                message = (
                    f"{message}; get_state_dict is a collective, so call it on every rank before "
                    f"the rank test ({guard}) and pass its result"
                )
            elif not forwards_keywords:
                fix = self._fix(call, unwrap)
        self.report(call.func, self._noted(message, kind), fix=fix, evidence=shown, kind=kind)

    def _rank_guard(self, call: cst.Call) -> str | None:
        """Why some ranks may not reach ``call`` (a collective added there would hang), or None."""
        function = self.model.context.enclosing_function(call)
        decorator = main_only_decorator(function) if function is not None else None
        if decorator is not None:
            return f"the function is decorated @{decorator}"
        divergence = rank_divergence(self.model, call)
        return divergence.text if divergence is not None else None

    def _fix(self, call: cst.Call, unwrap: cst.Call) -> Fix | None:
        if not call.args:
            return None
        receiver, wrapped_node = call.func.value, unwrap.args[0].value  # type: ignore[attr-defined]
        if isinstance(receiver, cst.Name) and isinstance(wrapped_node, cst.Name) and receiver.value == wrapped_node.value:
            # `model = accelerator.unwrap_model(model)`: the engine is no longer in reach by its
            # name, and get_state_dict of the bare module fails under ZeRO-3.
            return None
        accelerator = self.source.module.code_for_node(unwrap.func.value)  # type: ignore[attr-defined]
        wrapped = self.source.module.code_for_node(unwrap.args[0].value)
        added = [f"state_dict={accelerator}.get_state_dict({wrapped})"]
        if argument(call, "is_main_process", 1) is None:
            # get_state_dict returns the gathered weights on the main process and None on the
            # others, whose save_pretrained would write their placeholders over the same files.
            added.insert(0, f"is_main_process={accelerator}.is_main_process")
        reason = None if _gathers_16bit_weights(self.source.text) else Unsafe.GATHER_FLAG.text()
        return self.fix(self._append_keywords(call, call.args[-1], added), reason=reason)

    def _append_keywords(self, call: cst.Call, last: cst.Arg, keywords: list[str]) -> Edit:
        """After the last argument: ``, kw=...`` on its line, or one line each, at its indentation,
        when the arguments stand one a line with a trailing comma, or on lines of their own that
        would grow past ``MAX_LINE``."""
        _, value_end = self.span_of(last.value)
        start = self.get_metadata(PositionProvider, last)
        line = self.source.lines[start.start.line - 1]
        indent = line[: start.start.column]
        if isinstance(last.comma, cst.Comma) and not indent.strip():
            comma_end = self.source.text.index(",", value_end) + 1
            return Edit(comma_end, comma_end, "".join(f"\n{indent}{k}," for k in keywords))
        inline = "".join(f", {k}" for k in keywords)
        end_line = self.get_metadata(PositionProvider, last).end
        line_text = self.source.lines[end_line.line - 1]
        call_line = self.get_metadata(PositionProvider, call).start.line
        if end_line.line > call_line and len(line_text) + len(inline) > MAX_LINE:
            # The arguments have lines of their own: one more line each, at the last one's indentation.
            own_indent = line_text[: len(line_text) - len(line_text.lstrip())]
            return Edit(value_end, value_end, "".join(f",\n{own_indent}{k}" for k in keywords))
        return Edit(value_end, value_end, inline)

    def _code(self, node: cst.CSTNode) -> str:
        return " ".join(self.source.module.code_for_node(node).split())


def _gathers_16bit_weights(text: str) -> bool:
    """The file's own DeepSpeed settings let get_state_dict gather: ``DeepSpeedPlugin(...,
    zero3_save_16bit_model=True)`` or a config dict with ``"stage3_gather_16bit_weights_on_model_save": True``."""
    return bool(_GATHER_FLAG_SET.search(text))

