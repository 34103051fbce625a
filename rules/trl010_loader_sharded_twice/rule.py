"""TRL010 loader-sharded-twice: a loader already cut by rank, passed to ``accelerator.prepare``.

``accelerator.prepare`` (and ``prepare_data_loader``) shards every loader it is given across the
processes. A loader whose ``DistributedSampler`` (or whose dataset, cut with ``shard(index=rank)``)
already holds this rank's shard is cut a second time: each rank trains on 1 / world_size² of the
data, and the job on 1 / world_size of it, with no error and a normal-looking loss curve.
A Trainer subclass whose ``_get_train_sampler`` returns a ``DistributedSampler`` does the same:
the Trainer passes that loader to ``accelerator.prepare``.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.cst.names import argument
from trllint.core.findings import Evidence, Fix, ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import MULTI_PROCESS
from trllint.facts.launch.model import launch_of
from trllint.rule.base import AllOf, AnyOf, Calls, Defines, FindingKind, Rule
from trllint.semantic.context import CONTEXT_METADATA, is_trainer_class, methods_of
from trllint.semantic.model import SemanticModel

from .sharding import Sharding, ShardingFacts

PREPARE_METHODS = frozenset({"prepare", "prepare_data_loader"})
# Trainer methods whose sampler transformers' Trainer puts in a loader it passes to prepare.
TRAINER_SAMPLER_METHODS = frozenset({"_get_train_sampler", "_get_eval_sampler"})
# A future accelerate option (huggingface/accelerate#4087, #4201) that tells prepare the loader
# is sharded already; a file that spells it has thought about it.
ALREADY_SHARDED = "already_sharded"


class Unsafe(ReasonKind):
    ORDER_CHANGES = (
        "the order changes: the loader shuffles with accelerate's seeded generator instead of the "
        "sampler's own seed, and accelerate evens the ranks' batches instead of the sampler"
    )


class LoaderShardedTwice(Rule):
    code = "TRL010"
    name = "loader-sharded-twice"
    message = (
        "loader already sharded by rank passed to accelerator.prepare, which shards it again: each rank "
        "trains on 1/world_size² of the data; give prepare the whole dataset and let it shard"
    )
    fixable = "sometimes"
    kinds = {
        "sharded-twice": FindingKind("a loader cut by rank and sharded again, under a launch that shows several processes"),
        "launch-unknown": FindingKind(
            "a loader cut by rank and sharded again, where no launch shows several processes", unproven=True
        ),
    }
    # Last, the code itself: a prepare call, or a Trainer's sampler method, is where every finding is.
    prefilter = AllOf(
        AnyOf("prepare", "_sampler"),
        AnyOf("Sampler", "shard", "split_dataset_by_node", "::"),
        AnyOf(Calls(*PREPARE_METHODS), Defines(*TRAINER_SAMPLER_METHODS)),
    )
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        if ALREADY_SHARDED in self.source.text:
            return
        facts = ShardingFacts(model)
        for call in calls_in(model):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in PREPARE_METHODS):
                continue
            if not is_accelerator(func.value, model.context):
                continue
            loaders = [a for a in call.args if a.keyword is None and not a.star]
            for arg in loaders if func.attr.value == "prepare" else loaders[:1]:
                sharding = facts.loader_sharding(arg.value, call)
                if sharding is not None:
                    self._report(sharding, call, facts)
        for cls in model.definitions.classes:
            if is_trainer_class(cls):
                for name, method in methods_of(cls).items():
                    if name in TRAINER_SAMPLER_METHODS:
                        self._check_trainer_sampler(method, facts)

    def _report(self, sharding: Sharding, prepare: cst.Call, facts: ShardingFacts) -> None:
        launch = launch_of(self.model, prepare)
        if not launch.multi_process:
            return  # one process: prepare cuts nothing and the sampler keeps the whole set
        label = self._code(prepare.func)
        if sharding.how == "dataset":
            cut = f"a dataset cut by rank (`{self._code(sharding.made_by)}`)"
            remedy = "give the loader the whole dataset and let prepare shard it"
        else:
            cut = f"a {sharding.how} that shards by rank (`{self._short(sharding.made_by)}`)"
            remedy = "drop the sampler (shuffle in the loader instead) and let prepare shard it"
        message = (
            f"loader with {cut} passed to {label}, which shards it again: each rank trains on "
            f"1/world_size² of the data; {remedy}"
        )
        line = self.source.module.code_for_node(prepare)
        shards = Evidence(self.source.display_path, self._line_of(prepare), f"{label} shards the loader: `{self._short_text(line)}`")
        shown = launch.shown(MULTI_PROCESS)
        kind = "sharded-twice" if shown else "launch-unknown"
        self.report(sharding.node, message, fix=self._drop_sampler(sharding, facts), evidence=(shards, *shown), kind=kind)

    def _check_trainer_sampler(self, method: cst.FunctionDef, facts: ShardingFacts) -> None:
        for statement in _returns(method):
            if statement.value is None:
                continue
            made_by = facts.sampler_by_rank(statement.value, statement)
            if made_by is None:
                continue
            launch = launch_of(self.model, statement)  # the launch model only for a sampler by rank
            if not launch.multi_process:
                continue
            message = (
                f"{method.name.value} returns a sampler that shards by rank (`{self._short(made_by)}`); the Trainer "
                "puts it in a loader it passes to accelerator.prepare, which shards it again: each rank trains on "
                "1/world_size² of the data; return a sampler over the whole dataset"
            )
            shown = launch.shown(MULTI_PROCESS)
            self.report(statement.value, message, evidence=shown, kind="sharded-twice" if shown else "launch-unknown")

    def _drop_sampler(self, sharding: Sharding, facts: ShardingFacts) -> Fix | None:
        """``sampler=DistributedSampler(d, shuffle=s)`` -> ``shuffle=s``: only for torch's sampler
        written in the loader's call, in a loader that says nothing of shuffling itself."""
        arg, loader, sampler = sharding.argument, sharding.loader, sharding.made_by
        if sharding.how != "sampler" or arg is None or loader is None or arg.value is not sampler:
            return None
        if not isinstance(sampler, cst.Call) or not facts.is_torch_sampler(sampler) or arg.keyword is None:
            return None
        if argument(loader, "shuffle", 2) is not None:
            return None
        shuffle = argument(sampler, "shuffle", 3)
        value = shuffle.value if shuffle is not None else cst.Name("True")
        edits = (self.replace(arg.keyword, cst.Name("shuffle")), self.replace(arg.value, value))
        return self.fix(*edits, reason=Unsafe.ORDER_CHANGES.text())

    def _code(self, node: cst.CSTNode) -> str:
        return " ".join(self.source.module.code_for_node(node).split())

    def _short(self, call: cst.BaseExpression) -> str:
        if isinstance(call, cst.Call):
            return f"{self._code(call.func)}(...)"
        return self._code(call)

    @staticmethod
    def _short_text(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= 80 else text[:77] + "..."

    def _line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line


def _returns(function: cst.FunctionDef) -> list[cst.Return]:
    """The ``return`` statements of ``function`` itself (not of functions nested in it)."""
    found: list[cst.Return] = []

    class Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    walk.visit(function, Returns())  # the read-only walk: LibCST's own visit rebuilds every node
    return found
