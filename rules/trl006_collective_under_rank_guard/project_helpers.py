"""Functions of other modules of the project that enter a collective.

``from utils import save_checkpoint`` then ``if accelerator.is_main_process: save_checkpoint(...)``,
where ``save_checkpoint`` calls ``accelerator.get_state_dict``: the call enters that collective on
the ranks that make it only. The module that defines the function is read as the rule reads a
function of the linted file (``CollectiveUnderRankGuard.enters_collective``: a collective its body
reaches with no rank guard of its own, and the backends under which it is one), one level deep:
a function there that calls into a third module is not followed. A function that runs a forward
of the model it is handed is read by ``forwards.py``'s own fact, asked when the call hands it an engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import libcst as cst
from libcst.metadata import PositionProvider

from dataclasses import dataclass
from trllint.core.cst.names import call_name
from trllint.facts.launch.backends import Backend
from trllint.rule.base import AnyOf
from trllint.semantic.project.file_view import project_view
from trllint.semantic.project.summaries import ModuleAnswer, ModuleFact

from .collectives import COLLECTIVE_NAMES, ENGINE_FORWARD_BACKENDS, Collective, call_label
from .forwards import FunctionReader, handed_engine, hands_an_engine, per_function

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

# What a module must spell to hold a function that enters a collective: a collective's name, or
# `initialize` for the forward of an engine `deepspeed.initialize` made there. A module that spells
# none is never parsed for ENTERS_A_COLLECTIVE.
SPELLS_A_COLLECTIVE = AnyOf(*sorted(COLLECTIVE_NAMES), "initialize")


class EnteringReader(FunctionReader, Protocol):
    """What this module asks of the rule besides how it reads a function: what a function enters."""

    @property
    def module_function_names(self) -> frozenset[str]: ...
    def enters_collective(self, function: cst.FunctionDef) -> Collective | None: ...
    def helper_backends(self, function: cst.FunctionDef) -> frozenset[Backend] | None: ...


@dataclass(frozen=True)
class EnteredCollective:
    """A collective a project function enters on every rank that calls it."""

    label: str  # the collective's call, as the helper spells it: `accelerator.get_state_dict`
    path: Path  # the module that defines the function
    line: int  # the collective's line there
    backends: frozenset[Backend] | None  # the backends under which it is one (None: every backend)


def entered_collectives(rule: EnteringReader, model: SemanticModel) -> ModuleAnswer:
    """``f`` -> {label, line, backends} for each top-level function of the module that enters a
    collective with no rank guard of its own. ``rule``: the rule's own reading of a function (its
    collectives, its guards, its backend tests)."""

    def entry(function: cst.FunctionDef) -> dict[str, Any] | None:
        inner = rule.enters_collective(function)
        if inner is None:
            return None
        backends = rule.helper_backends(function)
        return {
            "label": inner.label,
            "line": rule.get_metadata(PositionProvider, inner.call).start.line,
            "backends": None if backends is None else sorted(backend.name for backend in backends),
        }

    return per_function(rule, model, entry)


class ProjectHelpers:
    """The linted file's calls of functions defined in other modules of its project."""

    def __init__(self, rule: EnteringReader, model: SemanticModel, fact: ModuleFact, forwards: ModuleFact) -> None:
        self._view = project_view(model)
        self._fact = fact  # the rule's ENTERS_A_COLLECTIVE
        self._forwards = forwards  # and its FORWARDS_A_PARAMETER
        self._linted = model.source
        self._context = model.context
        self._local = rule.module_function_names
        self._answers: dict[str, EnteredCollective | None] = {}

    def collective_of(self, call: cst.Call) -> Collective | None:
        """``call`` as a collective, when the project function it lands on enters one."""
        entered = self.entered_by(call)
        if entered is None:
            return self._engine_forward(call)
        where = display_path(entered.path, self._linted.display_path, self._linted.path)
        label = f"{call_label(call)}() (it calls {entered.label}, at {where}:{entered.line})"
        return Collective(call, label, f"call:{call_label(call)}", "never", entered.backends, (where, entered.line))

    def _engine_forward(self, call: cst.Call) -> Collective | None:
        """``call`` handing a DeepSpeed engine to a project function that runs its forward."""
        name = self.imported_name(call)
        if name is None or self._view is None or not hands_an_engine(call, self._context):
            return None
        definition = self._view.function(name)
        if definition is None:
            return None
        answer = self._view.fact(definition, self._forwards)
        found = answer.get(definition.name) if answer is not None else None
        engine = handed_engine(call, (found["position"], found["parameter"]), self._context) if found else None
        if not found or engine is None:
            return None
        where = display_path(definition.path, self._linted.display_path, self._linted.path)
        label = f"{call_label(call)}() (it runs a forward of {engine}, a DeepSpeed engine, at {where}:{found['line']})"
        kind = f"call:{call_label(call)}"
        return Collective(call, label, kind, "never", ENGINE_FORWARD_BACKENDS, (where, found["line"]))

    def imported_name(self, call: cst.Call) -> str | None:
        """The name ``call`` calls when the file imports it (a function of another module of
        the project, maybe), else None; nothing is read to answer."""
        name = call_name(call)
        if name is None or self._view is None:
            return None
        head = name.partition(".")[0]
        if head in ("self", "cls") or head in self._local or head not in self._view.imports:
            return None
        return name

    def entered_by(self, call: cst.Call) -> EnteredCollective | None:
        """The collective the project function ``call`` lands on enters, or None (not a project
        function, or one that enters none; unknown is none)."""
        name = self.imported_name(call)
        if name is None:
            return None
        if name not in self._answers:
            self._answers[name] = self._entered(name)
        return self._answers[name]

    def _entered(self, name: str) -> EnteredCollective | None:
        assert self._view is not None
        definition = self._view.function_spelling(name, SPELLS_A_COLLECTIVE)
        if definition is None:
            return None
        answer = self._view.fact(definition, self._fact, deep_if=SPELLS_A_COLLECTIVE)
        entered = None if answer is None else answer.get(definition.name)
        if not entered:
            return None
        backends = entered["backends"]
        return EnteredCollective(
            entered["label"],
            definition.path,
            entered["line"],
            None if backends is None else frozenset(Backend[backend] for backend in backends),
        )


def display_path(path: Path, linted: str, linted_path: Path | None) -> str:
    """``path`` as the user names the linted file (``linted``): relative to where trllint runs
    when the file is named so, else absolute."""
    if linted_path is None or os.path.isabs(linted):
        return str(path)
    relative = os.path.relpath(path, linted_path.resolve().parent)
    return os.path.normpath(os.path.join(os.path.dirname(linted), relative))
