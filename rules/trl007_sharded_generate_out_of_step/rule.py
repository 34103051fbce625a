"""TRL007 sharded-generate-out-of-step: ``generate`` or a forward of a ZeRO-3 / FSDP model that the
ranks do not run alike.

Under DeepSpeed ZeRO-3 and FSDP every forward step gathers the parameters from every rank: a
collective. ``model.generate(...)`` under ``if accelerator.is_main_process:`` makes rank 0 wait
in the first gather for ranks that never come. transformers keeps the ranks in step through a
generation (``synced_gpus``) when it sees ZeRO-3 or FSDP; ``synced_gpus=False`` turns that off,
and the ranks hang as soon as one stops generating before the others.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.cst.names import argument, dotted_name
from trllint.core.findings import Evidence, ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.calls import called_names, calls_in
from trllint.facts.launch.backends import SHARDED, describe
from trllint.facts.launch.backend_tests import backends_possible_at
from trllint.facts.launch.model import launch_of
from trllint.facts.partitioning import backends_sharding
from trllint.facts.rank_reads import RANK_MARKERS
from trllint.facts.rank_split import Divergence, RankDivergence, rank_split
from trllint.facts.ranks import main_only_decorator
from trllint.facts.unwrapping import params_gathered_at, unwrap_call_of
from trllint.facts.wrapping import PREPARE_METHODS
from trllint.rule.base import AllOf, AnyOf, Calls, FindingKind, Rule
from trllint.semantic.context import CONTEXT_METADATA, is_trainer_class
from trllint.semantic.model import SemanticModel

from .hoisting import hoist_generate

SHARDED_TEXT = describe(SHARDED)


class Unsafe(ReasonKind):
    """The fact a fix stands on that the linter cannot prove."""

    NOT_ONLY_SHARDED = (
        "synced_gpus=True all-reduces at every step: without a process group (one process) it fails, and "
        "under DDP every rank must then call generate as often as the others; no launch shows this code "
        "runs only under " + SHARDED_TEXT
    )


class ShardedGenerateOutOfStep(Rule):
    code = "TRL007"
    name = "sharded-generate-out-of-step"
    message = "generate or forward of a sharded model that the ranks do not run alike: the job hangs"
    fixable = "sometimes"
    kinds = {
        "sharded-launch": FindingKind("a model a launch of the project shows sharded (ZeRO-3, FSDP)"),
        "launch-unknown": FindingKind("a model no launch of the project shows sharded", unproven=True),
    }
    # A sharded model (unwrapped, an engine's module, prepared, the Trainer's: all spell
    # `generate` or one of these), and what keeps the ranks apart: a rank test or synced_gpus.
    # Last, the code's own calls: a generate, or a forward of `x.module`, of an unwrapped or of a
    # prepared model, each of which calls one of these (_sharded_forward).
    prefilter = AllOf(
        AnyOf("generate", "unwrap_model", ".module", "prepare"),
        AnyOf("synced_gpus", *RANK_MARKERS),
        AnyOf(Calls("generate", "module", "unwrap_model", *PREPARE_METHODS)),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        self._exits: dict[int, tuple[dict[int, int], tuple[int, cst.BaseExpression] | None]] = {}
        # Per scope: each name -> the values its assignments there come from (_prepare_bindings).
        self._bindings: dict[int, dict[str, list[cst.BaseExpression | None]]] = {}
        for call in calls_in(model):
            label = self._sharded_forward(call)
            if label is None or params_gathered_at(model, call) or self._sharding_ruled_out_here(call):
                continue
            guard = self._rank_guard(call)
            if guard is not None:
                self._report_guarded(call, label, guard)
                continue
            synced = argument(call, "synced_gpus")
            if label.endswith(".generate") and synced is not None and _is_false(synced.value):
                self._report_unsynced(call, label, synced)

    # ---- which calls run a forward of a sharded model ----------------------------------------

    def _sharded_forward(self, call: cst.Call) -> str | None:
        """``<model>.generate`` or ``<model>`` (a forward), where the model is one accelerate,
        DeepSpeed or FSDP shards; None for any other call."""
        func = call.func
        code = self.source.module.code_for_node
        if isinstance(func, cst.Attribute) and func.attr.value == "generate":
            return f"{code(func.value)}.generate" if self._sharded_model(func.value, call) else None
        if isinstance(func, (cst.Name, cst.Attribute)) and self._sharded_model(func, call, forward=True):
            return f"{code(func)} (a forward)"
        return None

    def _sharded_model(self, receiver: cst.BaseExpression, at: cst.Call, *, forward: bool = False) -> bool:
        model = self.model  # asked of every call of the file: the property once
        unwrap = unwrap_call_of(model, receiver, at)
        if unwrap is not None:
            # Unless no backend shards the module behind it (an EMA copy never prepared).
            return bool(backends_sharding(model, unwrap.args[0].value, unwrap))
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "module":
            return True  # engine.module / model.module: the model a DeepSpeed engine or FSDP holds
        name = dotted_name(receiver)
        if name is None:
            return False
        if not forward and name in ("trainer.model", "self.model"):
            # The Trainer's model: its parameters are the engine's under ZeRO-3 / FSDP.
            cls = model.context.enclosing_class(at)
            return name == "trainer.model" or (cls is not None and is_trainer_class(cls))
        return isinstance(receiver, cst.Name) and self._prepared(model, receiver, at)

    def _prepared(self, model: SemanticModel, receiver: cst.Name, at: cst.Call) -> bool:
        """A name every binding of which in its scope comes from ``accelerator.prepare(...)``."""
        if called_names(model).isdisjoint(PREPARE_METHODS):
            return False  # no binding anywhere comes from a prepare call
        scope = model.context.enclosing_function(at) or self.source.module
        if id(scope) not in self._bindings:
            self._bindings[id(scope)] = _prepare_bindings(scope) if self._calls_prepare(scope) else {}
        values = self._bindings[id(scope)].get(receiver.value, [])
        return bool(values) and all(
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Attribute)
            and v.func.attr.value in PREPARE_METHODS
            and is_accelerator(v.func.value, model.context)
            and argument(v, "evaluation_mode") is None
            for v in values
        )

    def _calls_prepare(self, scope: cst.CSTNode) -> bool:
        """A function whose own body calls no ``x.prepare(...)`` binds nothing to one: its
        bindings need not be read (the model's walk noted each body's calls)."""
        if not isinstance(scope, cst.FunctionDef):
            return True
        calls = self.model.calls_in_body(scope)
        return calls is None or any(
            isinstance(call.func, cst.Attribute) and call.func.attr.value in PREPARE_METHODS for call in calls
        )

    def _sharding_ruled_out_here(self, call: cst.Call) -> bool:
        """The call sits where a backend test says neither ZeRO-3 nor FSDP runs."""
        return not backends_possible_at(self.model, call) & SHARDED

    def _rank_guard(self, call: cst.Call) -> tuple[str, cst.CSTNode | None] | None:
        """Why some ranks may not reach ``call`` in its function, and the ``if`` that decides (the
        ``facts.rank_split.rank_divergence`` questions on rank reads, each block's early exits
        found once: a loop of many guarded calls stays linear)."""
        function = self.model.context.enclosing_function(call)
        decorator = main_only_decorator(function) if function is not None else None
        if decorator is not None:
            return f"in a function decorated @{decorator}, which runs on some ranks only", None
        child: cst.CSTNode = call
        for ancestor in self.model.context.ancestors(call):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                return None
            if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is not ancestor.test:
                if self._reads_rank(ancestor.test, ancestor):
                    return RankDivergence(Divergence.RANK_GUARD, self._shown(ancestor.test)).text, ancestor
            if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right and self._reads_rank(ancestor.left, call):
                return RankDivergence(Divergence.SHORT_CIRCUIT, self._shown(ancestor.left)).text, None
            if isinstance(ancestor, cst.IndentedBlock):
                exit_test = self._early_exit_before(ancestor, child)
                if exit_test is not None:
                    return RankDivergence(Divergence.EARLY_EXIT, self._shown(exit_test)).text, None
            child = ancestor
        return None

    def _early_exit_before(self, block: cst.IndentedBlock, child: cst.CSTNode) -> cst.BaseExpression | None:
        """The test of the first ``if <rank test>: return`` (or break/continue) of ``block``, when
        it comes before ``child``."""
        if id(block) not in self._exits:
            positions = {id(statement): index for index, statement in enumerate(block.body)}
            first = next(
                ((i, st.test) for i, st in enumerate(block.body) if isinstance(st, cst.If) and self._reads_rank(st.test, st)
                 and _leaves(st)),
                None,
            )
            self._exits[id(block)] = (positions, first)
        positions, first = self._exits[id(block)]
        if first is None or positions.get(id(child), -1) <= first[0]:
            return None
        return first[1]

    def _reads_rank(self, test: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The ranks part on ``test`` because it reads the rank (the prefilter's rank markers):
        the one rank-split fact, asked of rank reads only."""
        return rank_split(self.model, test, at, data=False) is not None

    def _shown(self, node: cst.CSTNode) -> str:
        text = " ".join(self.source.module.code_for_node(node).split())
        return text if len(text) <= 60 else text[:57] + "..."

    # ---- the findings ---------------------------------------------------------------------------

    def _launch(self, call: cst.Call) -> tuple[tuple[Evidence, ...], str | None] | None:
        """The evidence the launch is sharded, and the preview note when no launch says; None when
        the project never runs this code under ZeRO-3 or FSDP."""
        launch = launch_of(self.model, call)
        shown = launch.shown(SHARDED)
        if shown:
            return shown, None
        if not launch.possible(SHARDED):
            return None
        return (), launch.unknown_message(SHARDED)

    def _report_guarded(self, call: cst.Call, label: str, guard: tuple[str, cst.CSTNode | None]) -> None:
        decided = self._launch(call)
        if decided is None:
            return
        evidence, unknown = decided
        why, guard_node = guard
        message = (
            f"{label} runs on some ranks only ({why}): under {SHARDED_TEXT} each forward step gathers the "
            "parameters from every rank, so the others never join and the job hangs; run it on every rank "
            "and keep only the printing under the rank test"
        )
        if unknown:
            message = f"{message} ({unknown})"
        if guard_node is not None:
            line = self.get_metadata(PositionProvider, guard_node).start.line
            evidence = (Evidence(self.source.display_path, line, f"the rank guard: {why}"), *evidence)
        fix = hoist_generate(self, call, guard_node) if isinstance(guard_node, cst.If) else None
        self.report(call, message, fix=fix, evidence=evidence, kind="launch-unknown" if unknown else "sharded-launch")

    def _report_unsynced(self, call: cst.Call, label: str, synced: cst.Arg) -> None:
        decided = self._launch(call)
        if decided is None:
            return
        evidence, unknown = decided
        message = (
            f"{label}(..., synced_gpus=False) under {SHARDED_TEXT}: a rank that finishes its sequences first "
            "stops running forward steps while the others wait in its parameter gathers, and the job hangs; "
            "pass synced_gpus=True"
        )
        if unknown:
            message = f"{message} ({unknown})"
        launch = launch_of(self.model, call)
        reason = None if launch.only(SHARDED) else Unsafe.NOT_ONLY_SHARDED.text()
        fix = self.fix(self.replace(synced.value, cst.Name("True")), reason=reason)
        self.report(synced, message, fix=fix, evidence=evidence, kind="launch-unknown" if unknown else "sharded-launch")


def _leaves(statement: cst.If) -> bool:
    """A return, break or continue in the ``if`` (not in a function or loop defined inside it)."""
    found = False

    class Exits(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            found = found or isinstance(node, (cst.Return, cst.Break, cst.Continue))
            return not found and not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.For, cst.While))

    statement.body.visit(Exits())
    if statement.orelse is not None:
        statement.orelse.visit(Exits())
    return found


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _prepare_bindings(scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression | None]]:
    """Each name bound in ``scope`` -> the value each of its bindings there comes from, in order
    (functions and classes defined inside are scopes of their own); an unpacked binding
    (``model, optimizer = accelerator.prepare(model, optimizer)``) counts as the call it unpacks.
    One pass over the scope's statements, however many names are asked."""
    values: dict[str, list[cst.BaseExpression | None]] = {}
    for node in walk.statements(scope, into_definitions=False):
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                values.setdefault(target.target.value, []).append(node.value)
            elif isinstance(target.target, (cst.Tuple, cst.List)):
                # Once per assignment, however often the name is unpacked in it.
                unpacked = dict.fromkeys(e.value.value for e in target.target.elements if isinstance(e.value, cst.Name))
                for name in unpacked:
                    values.setdefault(name, []).append(node.value)
    return values
