"""TRL002 eval-mode-prepare-without-placement.

``accelerator.prepare_model(model, evaluation_mode=True)`` under FSDP: accelerate defaults
``device_placement`` to False when FSDP is on (the FSDP wrap is meant to place the model) and
``evaluation_mode=True`` skips that wrap, so the model is neither wrapped nor moved. TRL's
reference, reward and teacher models were prepared this way and stayed on the CPU.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.findings import ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.launch.backend_tests import backends_possible_at
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import Backend
from trllint.facts.launch.model import launch_of
from trllint.semantic.context import CONTEXT_METADATA
from trllint.semantic.model import SemanticModel
from trllint.rule.edits import arguments_on_their_own_line, indent_of
from trllint.core.cst.names import ImportMap, argument, call_name, is_none, is_true, matches
from trllint.rule.base import LINE_LENGTH_SETTING, AllOf, AnyOf, Calls, Edit, FindingKind, Fix, Rule

# accelerate's signature: prepare_model(model, device_placement=None, evaluation_mode=False)
_PLACEMENT_POSITION = 1
_EVALUATION_POSITION = 2
_PLACEMENT = "device_placement=True"
_FSDP = frozenset({Backend.FSDP})


class Unsafe(ReasonKind):
    """Why adding ``device_placement=True`` may change what runs on one process."""

    PLACED_BY_HAND = "the file turns device placement off: the added placement moves this model even on one process"


class EvalModePrepareWithoutPlacement(Rule):
    code = "TRL002"
    name = "eval-mode-prepare-without-placement"
    message = (
        "prepare_model(..., evaluation_mode=True) without device_placement=True leaves the model "
        "on the CPU under FSDP (neither wrapped nor moved); pass device_placement=True"
    )
    fixable = "sometimes"
    kinds = {
        "fsdp-launch": FindingKind("a call in code whose launch shows FSDP"),
        "launch-unknown": FindingKind("a call in code whose launch does not show FSDP", unproven=True),
    }
    # The text first (no tree for most files), then the code's own calls: the finding is the call.
    prefilter = AllOf(AnyOf("prepare_model"), AnyOf(Calls("prepare_model")))
    settings_schema = {"line-length": LINE_LENGTH_SETTING}
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        """Each ``prepare_model`` call of the file, from the semantic model's one walk."""
        self.context = model.context
        for call in calls_in(model):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "prepare_model":
                self._check_call(call)

    def _check_call(self, node: cst.Call) -> None:
        if any(arg.star for arg in node.args):
            return  # *args or **kwargs may carry device_placement: nothing is known
        evaluation = argument(node, "evaluation_mode", _EVALUATION_POSITION)
        if evaluation is None or not is_true(evaluation.value):
            return
        placement = argument(node, "device_placement", _PLACEMENT_POSITION)
        if placement is not None and not is_none(placement.value):
            # Written out (True, False, a variable): the author decided where the model lives,
            # and may have placed it already (a model sharded at load time owns its placement).
            return
        if not is_accelerator(node.func.value, self.context) or Backend.FSDP not in backends_possible_at(self.model, node):
            return
        launch = launch_of(self.model, node)
        if not launch.possible(_FSDP):
            return  # no launch of this code uses FSDP
        evidence = launch.shown(_FSDP)
        message = self.message if evidence else f"{self.message} ({launch.unknown_message(_FSDP)})"
        if placement is None:
            fix = self._fix(*self._add_placement(node))
        else:
            fix = self._fix(self.replace(placement.value, cst.Name("True")))
        self.report(node, message, fix=fix, evidence=evidence, kind="fsdp-launch" if evidence else "launch-unknown")

    def _fix(self, *edits: Edit) -> Fix:
        return self.fix(*edits, reason=Unsafe.PLACED_BY_HAND.text() if self._file_places_models_by_hand else None)

    @cached_property
    def _file_places_models_by_hand(self) -> bool:
        """``Accelerator(device_placement=False)`` in this file: the added placement moves the
        model even on a single process. Asked once per file, and only when a fix is made."""
        return "device_placement" in self.source.text and _constructs_unplaced_accelerator(
            self.source.module, self.model.imports
        )

    def _add_placement(self, call: cst.Call) -> tuple[Edit, ...]:
        """Edits appending ``device_placement=True`` after the last argument, in the call's own layout."""
        text = self.source.text
        newline = self.source.module.default_newline
        last = call.args[-1]
        arg_start = self.get_metadata(PositionProvider, last).start
        value_end = self.get_metadata(PositionProvider, last.value).end
        value_end_offset = self.source.offset(value_end.line, value_end.column)
        line_start = self.source.offset(arg_start.line, 0)
        before_arg = text[line_start : self.source.offset(arg_start.line, arg_start.column)]
        # One argument per line (the last one starts its own line): the new one gets its own line too.
        own_line = before_arg.strip() == ""
        indent = before_arg
        line_end = self.source.offset(value_end.line, len(self.source.lines[value_end.line - 1]))
        rest = text[value_end_offset:line_end]
        if rest.lstrip().startswith(","):
            comma_end = value_end_offset + rest.index(",") + 1
            after_comma = text[comma_end:line_end].strip()
            if own_line and (after_comma == "" or after_comma.startswith("#")):
                return (Edit(line_end, line_end, f"{newline}{indent}{_PLACEMENT},"),)
            return (Edit(comma_end, comma_end, f" {_PLACEMENT},"),)
        if own_line:
            if rest.strip().startswith("#"):
                # Keep the comment on the line it was written on.
                return (
                    Edit(value_end_offset, value_end_offset, ","),
                    Edit(line_end, line_end, f"{newline}{indent}{_PLACEMENT}"),
                )
            return (Edit(value_end_offset, value_end_offset, f",{newline}{indent}{_PLACEMENT}"),)
        addition = f", {_PLACEMENT}"
        if len(self.source.lines[value_end.line - 1]) + len(addition) > self.settings["line-length"]:
            split = self._split_one_line_call(call, value_end_offset, addition)
            if split is not None:
                return (split,)
        return (Edit(value_end_offset, value_end_offset, addition),)

    def _split_one_line_call(self, call: cst.Call, args_end: int, addition: str) -> Edit | None:
        """A call on one line that the added argument pushes past the line length: its arguments
        move to one indented line of their own, as Black and Ruff's formatter lay it out."""
        position = self.get_metadata(PositionProvider, call)
        if position.start.line != position.end.line:
            return None
        func_end = self.get_metadata(PositionProvider, call.func).end
        first_arg = self.get_metadata(PositionProvider, call.args[0]).start
        text = self.source.text
        open_paren = text.index("(", self.source.offset(func_end.line, func_end.column))
        close_paren = text.index(")", args_end)
        args_start = self.source.offset(first_arg.line, first_arg.column)
        if text[args_end:close_paren].strip():
            return None
        indent = indent_of(self.source.lines[position.start.line - 1])
        content = arguments_on_their_own_line(text[args_start:args_end] + addition, indent, self.source.module)
        return Edit(open_paren + 1, close_paren, content)


def _constructs_unplaced_accelerator(module: cst.Module, imports: ImportMap) -> bool:
    found = False

    class AcceleratorCalls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if matches(imports.resolve(call_name(node)), "accelerate.Accelerator", "Accelerator"):
                placement = argument(node, "device_placement", 0)
                if placement is not None and not is_true(placement.value):
                    found = True

    walk.visit(module, AcceleratorCalls())
    return found
