"""TRL006 collective-under-rank-guard: a collective that only some ranks reach hangs the job.

``accelerator.gather_for_metrics``, ``wait_for_everyone``, ``get_state_dict`` under ZeRO-3,
``dist.barrier``: every rank must enter them. Under ``if accelerator.is_main_process:``, in an
``@accelerator.on_main_process`` function or after a per-rank early ``return``, rank 0 waits for
ranks that never come (or the others for rank 0) until the NCCL watchdog kills the job.
"""

from __future__ import annotations

import builtins

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.findings import Evidence
from trllint.facts.launch.backends import ANY, MULTI_PROCESS, Backend
from trllint.facts.launch.backend_tests import backends_possible_at
from trllint.facts.launch.model import launch_of
from trllint.facts.calls import called_names, calls_in
from trllint.semantic.context import CONTEXT_METADATA
from trllint.facts.distributed import DISTRIBUTED_MARKERS, runs_distributed
from trllint.facts.rank_reads import RANK_MARKERS
from trllint.facts.rank_split import Split, rank_split
from trllint.facts.ranks import ALL_RANKS, guard_key, main_only_decorator
from trllint.facts.wrapping import PREPARE_METHODS
from trllint.rule.base import AllOf, AnyOf, Calls, FindingKind, Reached, Rule
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.file_view import project_reaches
from trllint.semantic.project.summaries import ModuleAnswer, ModuleFact

from .collectives import AUTOMATIC_NAMING, COLLECTIVE_NAMES, DTENSOR_GATHER, Collective, call_label, collective_of
from .collectives import engines_from_initialize, names_checkpoints_automatically
from .early_exits import Guard, Holds, early_exit_before, fact_of
from .split_evidence import split_evidence
from .guard_syntax import (
    code_of, exit_of, ifs_in, made_in, run_by, runs_only_when_on, single_assignments, switched_off, under_parameter_test,
)
from .hoisting import hoist_fix
from .forwards import engine_forward_call, forwarded_parameters
from .project_helpers import SPELLS_A_COLLECTIVE, ProjectHelpers, entered_collectives

COLLECTIVE_MARKERS = (
    "gather", "reduce", "wait_for_everyone", "barrier", "broadcast", "scatter", "all_to_all",
    "get_state_dict", "save_model", "save_state", "save_checkpoint", "pad_across_processes", "check_trigger",
    "full_tensor", "deepspeed.initialize", "prepare",
)
_BUILTINS = frozenset(dir(builtins))
# A function of another module of the project that the file calls may enter a collective.
_HELPER_ENTERS = Reached(SPELLS_A_COLLECTIVE, calls=True)


class CollectiveUnderRankGuard(Rule):
    code = "TRL006"
    name = "collective-under-rank-guard"
    message = "collective reached by only some ranks: the others never enter it and the job hangs; call it on every rank"
    fixable = "sometimes"
    kinds = {
        "collective": FindingKind("a call that is a collective under every backend (a barrier, an all-reduce)"),
        "backend-collective": FindingKind(
            "a call that is a collective under the backends a launch of the project shows (save_state under ZeRO-3)"
        ),
        "per-rank-data": FindingKind(
            "a collective under a test of this rank's own data (a presence check of a value the code gathers): "
            "whether the data differs between ranks is not shown",
            unproven=True,
        ),
        "launch-unknown": FindingKind(
            "a call that is a collective only under backends no launch of the project shows", unproven=True
        ),
    }
    # A guard is a rank test, a rank-only decorator, or an exit under one: all spell a rank marker;
    # or a `continue` or `break` on this rank's own data (`if out is None: continue`), which need not.
    # Then the code's own calls: no call of a collective's name, no finding (check_module's first
    # question), unless a module of the project it calls spells one (the costly part, asked last).
    prefilter = AllOf(
        AnyOf(*DISTRIBUTED_MARKERS),
        AnyOf(*RANK_MARKERS, "continue", "break"),
        AnyOf(*COLLECTIVE_MARKERS, _HELPER_ENTERS),
        AnyOf(Calls(*COLLECTIVE_NAMES), "deepspeed.initialize", _HELPER_ENTERS),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        if (
            called_names(model).isdisjoint(COLLECTIVE_NAMES)
            and not engines_from_initialize(model.context)
            and not project_reaches(model, SPELLS_A_COLLECTIVE)
        ):
            return  # no collective, so no call of this file's functions enters one either
        if not runs_distributed(self.source) and not launch_of(model).shown(MULTI_PROCESS):
            # Neither imports nor a launch say several processes (a Trainer script that a
            # `deepspeed` command starts, or that builds TrainingArguments(deepspeed=...), does).
            return
        self.bind(model, project=True)
        for call in calls_in(model):
            collective = self.collective_or_entering_call(call, guarded_only=True)
            if collective is None:
                continue
            guard = self.guard_of(collective)
            if guard is not None:
                self._report(collective, guard)

    def bind(self, model: SemanticModel, *, project: bool) -> None:
        """Set what the questions below and the hoisting fix read (hoisting.py: rule.context,
        rule.model); with ``project``, a call of a function of another module of the project is
        read from that module's ``ENTERS_A_COLLECTIVE``."""
        self.context = model.context
        self._entering: dict[tuple[int, frozenset[str]], Collective | None] = {}
        self._backends_of_helpers: dict[tuple[int, frozenset[str]], frozenset[Backend] | None] = {}
        self._body_calls: dict[int, list[cst.Call]] = {}
        module = model.source.module
        self._module_functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        self._project = ProjectHelpers(self, model, ENTERS_A_COLLECTIVE, FORWARDS_A_PARAMETER) if project else None

    @property
    def module_function_names(self) -> frozenset[str]:
        return frozenset(self._module_functions)

    # ---- what is a collective --------------------------------------------------------------

    def collective_or_entering_call(self, call: cst.Call, *, guarded_only: bool = False) -> Collective | None:
        """``call`` as a collective: one itself, or a call of a function that enters one. With
        ``guarded_only``, a function no rank guard stands before the call of is not read (what a
        function enters costs a read of its body, or of another module): no finding either way."""
        collective = collective_of(call, self.context)
        if collective is not None:
            return collective
        function = self.own_function(call)
        if function is None and (self._project is None or self._project.imported_name(call) is None):
            return None
        if guarded_only and self._guard(call, None) is None:
            return None
        if function is None:
            return self._project.collective_of(call) if self._project is not None else None
        off = switched_off(call, function)
        inner = self.enters_collective(function, off)
        if inner is None:
            return engine_forward_call(self, call, function)
        label = f"{call_label(call)}() (it calls {inner.label})"
        backends = self.helper_backends(function, off)
        return Collective(call, label, f"call:{function.name.value}", "never", backends, inner.defined_in)

    def own_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of this file a call lands on: a module function, or a method of ``self``'s class."""
        func = call.func
        if isinstance(func, cst.Name):
            return self._module_functions.get(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.context.enclosing_class(call)
            if cls is not None:
                return self.model.class_facts(cls).methods.get(func.attr.value)
        return None

    def enters_collective(self, function: cst.FunctionDef, off: frozenset[str] = frozenset()) -> Collective | None:
        """A collective that every caller of ``function`` enters (none of its own guards in front),
        but for one only under ``if p:`` with ``p`` in ``off`` (``self.save(save_full=False)``)."""
        key = (id(function), off)
        if key not in self._entering:
            self._entering[key] = None  # recursion reads as no collective
            found = None
            for call in self.calls_run_by(function):
                collective = self.collective_or_entering_call(call)
                if collective is not None and self._entered_by_every_call(call, function, collective, off):
                    found = collective
                    break
            self._entering[key] = found
        return self._entering[key]

    def _entered_by_every_call(self, call: cst.Call, function: cst.FunctionDef, collective: Collective, off: frozenset[str]) -> bool:
        """``collective`` (run by ``call`` in ``function``) is entered whenever a caller that
        switches ``off`` those parameters runs the function: no guard of its own, and no test of a
        parameter the caller decides (`if synchronize: barrier()` read across modules; a
        DTensor's `full_tensor()` under `isinstance(tensor, DTensor)`: which mesh, if any, is the
        caller's)."""
        if self.guard_of(collective) is not None or runs_only_when_on(self.model, call, off):
            return False
        across_modules = self._project is None or collective.defined_in is not None
        if not (across_modules or collective.kind == DTENSOR_GATHER):
            return True
        return not under_parameter_test(call, function, self.context, self.enters_kind)

    def calls_run_by(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls that run when ``function`` runs, read once: both questions below ask them."""
        key = id(function)
        if key not in self._body_calls:
            # The model's walk noted them (a function of another tree is walked here).
            known = self.model.calls_in_body(function)
            self._body_calls[key] = list(known) if known is not None else run_by(function.body)
        return self._body_calls[key]

    def helper_backends(self, function: cst.FunctionDef, off: frozenset[str] = frozenset()) -> frozenset[Backend] | None:
        """The backends under which ``function`` enters a collective (None: under every backend):
        each collective it reaches with no rank guard of its own is one under its own backends
        (``save_state``: DeepSpeed or FSDP), narrowed by the function's tests around it (``if
        distributed and all_ranks_save:`` with ``all_ranks_save = use_deepspeed or use_fsdp``);
        ``off`` as for :meth:`enters_collective`."""
        key = (id(function), off)
        if key in self._backends_of_helpers:
            return self._backends_of_helpers[key]
        self._backends_of_helpers[key] = None  # recursion: under every backend
        values = single_assignments(function)
        found: frozenset[Backend] = frozenset()
        for call in self.calls_run_by(function):
            collective = self.collective_or_entering_call(call)
            if collective is None or not self._entered_by_every_call(call, function, collective, off):
                continue
            backends = collective.backends
            if collective.kind == "save_state" and names_checkpoints_automatically(self.source) is not None:
                backends = None  # a barrier under every backend
            possible = backends_possible_at(self.model, call, values.get)
            if possible != ANY:
                backends = possible if backends is None else backends & possible
            if backends is None:
                return None  # the cache keeps None: under every backend
            found |= backends
        self._backends_of_helpers[key] = found
        return found

    def enters_kind(self, node: cst.CSTNode, kind: str | None = None, *, nested: bool = False) -> bool:
        """True when running ``node`` enters a collective (of ``kind``, when one is named); with
        ``nested``, functions defined in ``node`` count too (``study.optimize(_objective)`` runs one)."""
        for call in run_by(node, nested=nested):
            collective = self.collective_or_entering_call(call)
            if collective is not None and kind in (None, collective.kind):
                return True
        return False

    # ---- who reaches it ---------------------------------------------------------------------

    def guard_of(self, collective: Collective) -> Guard | None:
        """The innermost rank guard that keeps some ranks from ``collective``, or None."""
        return self._guard(collective.call, collective)

    def _guard(self, call: cst.Call, collective: Collective | None) -> Guard | None:
        """``guard_of``; with no ``collective``, the innermost guard before the checks that need
        one (its backends, the other ranks meeting it elsewhere), each of which only clears a
        guard: None here is None for whatever the call enters."""
        child: cst.CSTNode = call
        kind = collective.kind if collective is not None else None
        # The ifs between the collective and the guard whose body leaves after it (`if fresh:
        # all_gather(...); continue`): the ranks that do not take that way may meet the same
        # collective further on, as the ranks outside the guard do.
        exits_after: list[cst.If] = []
        # What holds wherever the collective runs: (a test's code, its value), one per if passed.
        holds: Holds = set()
        for ancestor in self.context.ancestors(call):
            if isinstance(ancestor, (cst.Lambda, cst.ClassDef)):
                return None  # runs when called, not here
            if isinstance(ancestor, cst.FunctionDef):
                decorator = main_only_decorator(ancestor)
                return Guard(ancestor, "decorator", decorator) if decorator else None
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
                in_body = child is ancestor.body
                # A test that splits the ranks by reading the rank (the prefilter's markers), or a
                # name the function gathers (`if images is not None: gather_object(images)`); the
                # backends matter on the body's side only (`if is_main or distributed_type ==
                # DEEPSPEED:` lets every rank in under DeepSpeed).
                backends = collective.backends if in_body and collective is not None else None
                split = rank_split(self.model, ancestor.test, ancestor, backends, data=False, gathered=True)
                if (
                    split is not None
                    and (kind is None or not self._paired(ancestor, in_body, kind))
                    and (kind is None or not any(self._met_after_exit(inner, kind) for inner in exits_after))
                    and not made_in(child, call)
                ):
                    return Guard(ancestor, "if" if in_body else "else", code_of(self.source, ancestor.test), split)
                if isinstance(ancestor, cst.If) and in_body and exit_of(ancestor.body) is not None:
                    exits_after.append(ancestor)
                if isinstance(ancestor, cst.If) and (in_body or child is ancestor.orelse):
                    holds.add(fact_of(self.model, ancestor.test, in_body))
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                exit_guard = early_exit_before(self, ancestor, child, kind, holds)
                if exit_guard is not None:
                    return exit_guard
            child = ancestor
        return None

    def _paired(self, test_node: cst.If | cst.IfExp, in_body: bool, kind: str) -> bool:
        """True when the ranks that skip this side enter the same collective elsewhere: in the other
        branch, or under the opposite rank test in the same function (accelerate's
        ``main_process_first``: ``if not is_main: wait()``, ``yield``, ``if is_main: wait()``)."""
        other = test_node.orelse if in_body else test_node.body
        if other is not None and self.enters_kind(other, kind, nested=True):
            return True
        if other is not None and kind.startswith("call:") and self._runs_unseen_code(other):
            # A helper of this file that enters a collective (a subscriber loop's broadcast) on one
            # side, code the linter cannot read on the other (a server whose callbacks send the
            # matching broadcast): the other ranks may well meet it. Unknown is silent.
            return True
        if in_body and isinstance(test_node, cst.If) and self._met_after_exit(test_node, kind):
            return True
        key = guard_key(self.model, test_node.test)
        if key is None:
            return False
        runs_on = key[1] if in_body else ALL_RANKS - key[1]
        scope = self.context.enclosing_function(test_node) or self.source.module
        for sibling in ifs_in(scope):
            sibling_key = guard_key(self.model, sibling.test) if sibling is not test_node else None
            if sibling_key is None or sibling_key[0] != key[0]:
                continue
            for side, holds in ((sibling.body, sibling_key[1]), (sibling.orelse, ALL_RANKS - sibling_key[1])):
                if side is not None and holds == ALL_RANKS - runs_on and self.enters_kind(side, kind, nested=True):
                    return True
        return False

    def _met_after_exit(self, test_node: cst.If, kind: str) -> bool:
        """``if rank != 0: dist.barrier(); return`` then ``dist.barrier()`` later on: the ranks that
        enter the ``if`` meet the collective there and leave; the others skip it and meet the same
        collective after the ``if``, before their own exit (the end of the function, for a
        ``return``; of the loop's turn, for ``continue`` or ``break``)."""
        exit_kind = exit_of(test_node.body)
        if exit_kind is None:
            return False
        child: cst.CSTNode = test_node
        for ancestor in self.context.ancestors(test_node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(ancestor, (cst.For, cst.While)) and exit_kind != "return":
                return False
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                position = next((i for i, statement in enumerate(ancestor.body) if statement is child), None)
                for statement in ancestor.body[position + 1 :] if position is not None else ():
                    if self._every_rank_enters(statement, kind):
                        return True
            child = ancestor
        return False

    def _every_rank_enters(self, node: cst.CSTNode, kind: str) -> bool:
        """``node`` runs a collective of ``kind`` that no rank guard of its own keeps ranks from."""
        for call in run_by(node):
            collective = self.collective_or_entering_call(call)
            if collective is not None and collective.kind == kind and self.guard_of(collective) is None:
                return True
        return False

    def _runs_unseen_code(self, node: cst.CSTNode) -> bool:
        """True when ``node`` calls something that is neither a known collective, nor a function
        of this file, nor a Python builtin."""
        for call in run_by(node, nested=True):
            if collective_of(call, self.context) is not None or self.own_function(call) is not None:
                continue
            if isinstance(call.func, cst.Name) and call.func.value in _BUILTINS:
                continue
            return True
        return False

    # ---- the finding and its fix ---------------------------------------------------------------

    def _report(self, collective: Collective, guard: Guard) -> None:
        if guard.how == "decorator":
            where = f"in a function decorated @{guard.detail}, which runs on some ranks only"
            remedy = f"call it on every rank, outside the @{guard.detail} function"
        elif guard.how == "exit":
            where = f"after the per-rank early exit `{guard.detail}`"
            remedy = "call it on every rank, before the early exit"
        else:
            where = f"{'under' if guard.how == 'if' else 'in the else of'} `if {guard.detail}:`"
            remedy = "call it on every rank: hoist it above the rank test"
        if collective.kind in PREPARE_METHODS:
            remedy = "wrap the model once, on every rank: save from an unwrapped copy and keep the prepared model"
        gathered = guard.split is not None and guard.split.kind is Split.GATHERED
        if gathered:
            remedy = "call it on every rank, with a placeholder (None, an empty list) where this rank has nothing"
        automatic = names_checkpoints_automatically(self.source) if collective.kind == "save_state" else None
        described = f"{collective.label} (a collective: automatic checkpoint naming)" if automatic else collective.described
        message = f"{described} {where}: the other ranks never enter this collective and the job hangs; {remedy}"
        if collective.defined_in is not None and guard.how != "decorator" and self._traced_guard(guard):
            # A function of another module under a test that names no ranks, only a value traced
            # to a rank read through calls (`resume = find_checkpoint(output_dir, logger)` with a
            # logger made for this rank): the finding would stand on two modules and a guess.
            return
        launch = launch_of(self.model, collective.call)
        if not launch.multi_process:
            return  # one process (a notebook no launcher starts): there is no other rank to wait for
        guard_line = self.get_metadata(PositionProvider, guard.node).start.line
        evidence = [Evidence(self.source.display_path, guard_line, f"the rank guard: {where}")]
        evidence += split_evidence(self.source, self._line_of, guard.split, guard_line)
        if collective.defined_in is not None:
            path, line = collective.defined_in
            evidence.append(Evidence(path, line, f"{call_label(collective.call)} enters the collective here"))
        kind = "collective" if collective.backends is None or automatic is not None else "backend-collective"
        if gathered:
            kind = "per-rank-data"
        backends = collective.backends
        # The backends under which the guard still parts the ranks: a disjunction that names
        # some (`if is_main or distributed_type == DEEPSPEED:`) lets every rank in under those.
        admitted = False
        if guard.split is not None and guard.split.backends is not None:
            admitted = guard.split.backends != backends
            backends = guard.split.backends
        if automatic is not None:
            said = f"{AUTOMATIC_NAMING}=True: save_state enters a barrier under every backend"
            evidence.append(Evidence(self.source.display_path, automatic, said))
        elif backends is not None:
            shown = launch.shown(backends)
            if shown:
                evidence.extend(shown)
            elif not launch.possible(backends) or admitted:
                # The project never runs this code under a backend that makes it a collective; or
                # the guard lets every rank in under the backends the code names, and no launch
                # shows the others: unknown is agreed.
                return
            else:
                kind = "launch-unknown"
                message = f"{message} ({launch.unknown_message(backends)})"
        fix = hoist_fix(self, collective, guard.node) if guard.how == "if" and not gathered else None
        self.report(collective.call, message, fix=fix, evidence=tuple(evidence), kind=kind)

    def _line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _traced_guard(self, guard: Guard) -> bool:
        """The guard's test is no rank test that says which ranks pass (``is_main_process``,
        ``rank == 0``, a name bound to one): its split is traced through other values."""
        if guard.split is not None and guard.split.kind is Split.SET_ON_SOME_RANKS:
            return False  # the name is set in this function, under a rank test it shows
        test = guard.node.test if isinstance(guard.node, (cst.If, cst.IfExp)) else None
        return test is None or guard_key(self.model, test) is None


def _entered_collectives(model: SemanticModel) -> ModuleAnswer:
    return entered_collectives(CollectiveUnderRankGuard(model.source), model)


def _forwarded_parameters(model: SemanticModel) -> ModuleAnswer:
    return forwarded_parameters(CollectiveUnderRankGuard(model.source), model)


# Which functions of a module enter a collective on every rank that calls them, and under which
# backends (project_helpers.py); which run a forward of a parameter (forwards.py). Each version
# changes whenever the rule would read a module differently.
ENTERS_A_COLLECTIVE = ModuleFact("trl006.enters-a-collective", 21, _entered_collectives)
FORWARDS_A_PARAMETER = ModuleFact("trl006.forwards-a-parameter", 1, _forwarded_parameters)
