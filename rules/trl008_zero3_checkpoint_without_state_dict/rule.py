"""TRL008 zero3-checkpoint-without-state-dict: ``save_pretrained`` of a ZeRO-3 model with no gathered state dict.

Under DeepSpeed ZeRO-3 each parameter of the model holds a placeholder of shape ``[0]``; the
weights live in the engine's partitions. ``accelerator.unwrap_model(model).save_pretrained(out)``
(or ``engine.module.save_pretrained(out)``) reads the placeholders: a checkpoint of a few
kilobytes that ``from_pretrained`` refuses with size mismatches. ``state_dict=
accelerator.get_state_dict(model)`` gathers the partitions first (a collective: every rank calls it).
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst.names import argument
from trllint.core.findings import Evidence, ReasonKind
from trllint.facts.branches import rank_divergence
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import Backend
from trllint.facts.launch.branches import backends_named
from trllint.facts.launch.model import launch_of
from trllint.facts.partitioning import backends_sharding
from trllint.facts.ranks import main_only_decorator
from trllint.facts.unwrapping import params_gathered_at, unwrap_call_of
from trllint.rule.base import AllOf, AnyOf, Calls, Edit, FindingKind, Fix, Reads, Rule
from trllint.semantic.context import CONTEXT_METADATA
from trllint.semantic.model import SemanticModel

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
    kinds = {"zero3-launch": FindingKind("a model a launch of the project shows partitioned by ZeRO-3")}
    # Last, the code itself: a save_pretrained call on an unwrapped model (a call of unwrap_model)
    # or on `x.module`.
    prefilter = AllOf(
        AnyOf("save_pretrained"),
        AnyOf("unwrap_model", ".module"),
        AnyOf(Calls("save_pretrained")),
        AnyOf(Calls("unwrap_model"), Reads("module")),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        for call in calls_in(model):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "save_pretrained"):
                continue
            if argument(call, "state_dict", 2) is not None or any(a.star == "**" for a in call.args):
                continue  # a state dict is passed (or may be, through **kwargs)
            unwrap = unwrap_call_of(model, func.value, call)
            if unwrap is None and not _engine_module(func.value):
                continue
            if unwrap is not None and Backend.ZERO3 not in backends_sharding(model, unwrap.args[0].value, unwrap):
                continue  # a module no DeepSpeed engine holds and no zero.Init built: its weights are whole
            if self._params_whole_here(call):
                continue
            self._check(call, unwrap)

    # ---- which model: one whose parameters ZeRO-3 partitions ---------------------------------

    def _params_whole_here(self, call: cst.Call) -> bool:
        """The call runs where ZeRO-3 is known off (a backend test's other arm) or where the
        parameters are gathered (``with deepspeed.zero.GatheredParameters(...):``)."""
        if params_gathered_at(self.model, call):
            return True
        child: cst.CSTNode = call
        for ancestor in self.model.context.ancestors(call):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
                named = backends_named(ancestor.test)
                in_body = child is ancestor.body
                if named and (Backend.ZERO3 not in named if in_body else Backend.ZERO3 in named):
                    return True
            child = ancestor
        return False

    # ---- the finding and its fix ------------------------------------------------------------

    def _check(self, call: cst.Call, unwrap: cst.Call | None) -> None:
        launch = launch_of(self.model, call)
        shown = launch.shown(ZERO3)
        if not shown:
            # Ruled out, or nothing says: on the dev split none of the findings made where no launch
            # showed ZeRO-3 was real (13: 4 wrong, 9 debatable), so unknown is silent here.
            return
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
            if guard is None:
                fix = self._fix(call, unwrap)
            else:
                message = (
                    f"{message}; get_state_dict is a collective, so call it on every rank before "
                    f"the rank test ({guard}) and pass its result"
                )
        self.report(call.func, message, fix=fix, evidence=shown, kind="zero3-launch")

    def _rank_guard(self, call: cst.Call) -> str | None:
        """Why some ranks may not reach ``call`` (a collective added there would hang), or None."""
        function = self.model.context.enclosing_function(call)
        decorator = main_only_decorator(function) if function is not None else None
        if decorator is not None:
            return f"the function is decorated @{decorator}"
        divergence = rank_divergence(self.model, call, lambda _test, _node: False)
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


def _gathers_16bit_weights(text: str) -> bool:
    """The file's own DeepSpeed settings let get_state_dict gather: ``DeepSpeedPlugin(...,
    zero3_save_16bit_model=True)`` or a config dict with ``"stage3_gather_16bit_weights_on_model_save": True``."""
    return bool(_GATHER_FLAG_SET.search(text))


def _engine_module(receiver: cst.BaseExpression) -> bool:
    """``engine.module`` / ``model.module``: the model a DeepSpeed engine (or another wrapper) holds."""
    return isinstance(receiver, cst.Attribute) and receiver.attr.value == "module"
