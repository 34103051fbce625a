"""trllint.facts.branches and backend_tests: which tests, branches and early exits prove FSDP off; which ranks reach a node."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from trllint.facts.branches import proves
from trllint.facts.launch.backend_tests import backends_possible_at, possible_under, rules_out
from trllint.facts.launch.backends import Backend
from trllint.facts.rank_split import Divergence, RankDivergence, rank_divergence
from trllint.semantic.model import SemanticModel
from trllint.core.source import SourceFile


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@pytest.mark.parametrize(
    "test, when_true, when_false",
    [
        ("self.is_fsdp_enabled", True, False),
        ("trainer.is_fsdp_enabled", True, False),
        ("is_fsdp_enabled()", True, None),  # transformers' function: False under plain FSDP too
        ("self.accelerator.distributed_type == DistributedType.FSDP", True, False),
        ("DistributedType.FSDP == accelerator.state.distributed_type", True, False),
        ("accelerator.distributed_type != DistributedType.FSDP", False, True),
        ("accelerator.distributed_type is DistributedType.FSDP", True, False),
        ('accelerator.distributed_type == "FSDP"', True, False),
        ("accelerator.distributed_type == DistributedType.MULTI_GPU", False, None),
        ("accelerator.distributed_type != DistributedType.NO", None, False),
        ("accelerator.distributed_type in (DistributedType.FSDP, DistributedType.DEEPSPEED)", None, False),
        ("accelerator.distributed_type in [DistributedType.MULTI_GPU, DistributedType.NO]", False, None),
        ("accelerator.distributed_type not in {DistributedType.FSDP}", False, True),
        ("accelerator.distributed_type in modes", None, None),
        ('getattr(self.accelerator.state, "fsdp_plugin", None) is not None', True, False),
        ("self.accelerator.state.fsdp_plugin is None", False, True),
        ("self.accelerator.is_fsdp2", None, None),  # False is FSDP1 or no FSDP
        ("self.args.fsdp", True, None),  # False: FSDP may come from the launcher, not the arguments
        ("args.use_fsdp", True, False),  # a program's own switch, as the Trainer's flag
        ('accelerator.distributed_type == "fsdp"', None, None),  # never equal: the values are upper case
    ],
)
def test_knowledge_of_single_tests(test, when_true, when_false):
    """What a single test says of FSDP: True (on), False (off) or None (either), when true and when false."""

    def fsdp(possible):
        return None if Backend.FSDP in possible and len(possible) > 1 else Backend.FSDP in possible

    possible_when_true, possible_when_false = possible_under(expression(test))
    assert (fsdp(possible_when_true), fsdp(possible_when_false)) == (when_true, when_false)


@pytest.mark.parametrize(
    "test, outcome, fsdp_ruled_out",
    [
        ("not self.is_fsdp_enabled", True, True),
        ("not self.is_fsdp_enabled", False, False),
        ("self.is_deepspeed_enabled or self.is_fsdp_enabled", False, True),
        ("self.is_deepspeed_enabled or self.is_fsdp_enabled", True, False),
        ("self.is_fsdp_enabled and args.shard_reference", False, False),
        ("not self.is_fsdp_enabled and ref_model is not None", True, True),
        ("not (self.is_fsdp_enabled or self.is_deepspeed_enabled)", True, True),
        ("self.is_deepspeed_enabled", False, False),
    ],
)
def test_compound_tests(test, outcome, fsdp_ruled_out):
    assert proves(expression(test), outcome, rules_out(Backend.FSDP)) is fsdp_ruled_out


def known_off_by_marker(code: str) -> dict[str, bool]:
    """Whether FSDP is ruled out at each call ``mark("label")`` in ``code``."""
    source = SourceFile(text=textwrap.dedent(code), display_path="case.py")
    model = SemanticModel.of(source)
    answers: dict[str, bool] = {}

    class Marks(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "mark":
                answers[node.args[0].value.evaluated_value] = Backend.FSDP not in backends_possible_at(model, node)

    source.module.visit(Marks())
    return answers


def test_branches_and_early_exits():
    answers = known_off_by_marker(
        """
        class T(Trainer):
            def a(self):
                if self.is_deepspeed_enabled:
                    mark("deepspeed")
                elif self.is_fsdp_enabled:
                    mark("fsdp")
                else:
                    mark("elif-else")
                mark("after-chain")

            def b(self):
                if self.is_fsdp_enabled:
                    return
                mark("after-return")

            def c(self):
                for model in self.models:
                    if self.is_fsdp_enabled:
                        continue
                    mark("after-continue")
                mark("after-loop")

            def d(self):
                assert not self.is_fsdp_enabled; mark("after-assert-same-line")
                mark("after-assert")

            def e(self):
                if self.is_deepspeed_enabled:
                    return
                mark("after-deepspeed-return")

            def f(self):
                if self.is_fsdp_enabled:
                    log("fsdp")
                mark("after-if-without-exit")
                x = wrap() if self.is_fsdp_enabled else mark("ifexp-else")
                if mark("in-test") and not self.is_fsdp_enabled:
                    pass

            def g(self):
                if not self.is_fsdp_enabled:
                    pass
                else:
                    raise ValueError
                mark("after-else-raise")
        """
    )
    assert answers == {
        "deepspeed": True,  # DeepSpeed runs there, not FSDP
        "fsdp": False,
        "elif-else": True,
        "after-chain": False,
        "after-return": True,
        "after-continue": True,
        "after-loop": False,
        "after-assert-same-line": True,
        "after-assert": True,
        "after-deepspeed-return": False,
        "after-if-without-exit": False,
        "ifexp-else": True,
        "in-test": False,
        "after-else-raise": True,
    }


def divergence_by_marker(code: str) -> dict[str, RankDivergence | None]:
    """rank_divergence for each call ``mark("label")`` in ``code``."""
    source = SourceFile(text=textwrap.dedent(code), display_path="case.py")
    model = SemanticModel.of(source)
    answers: dict[str, RankDivergence | None] = {}

    class Marks(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "mark":
                answers[node.args[0].value.evaluated_value] = rank_divergence(model, node)

    source.module.visit(Marks())
    return answers


def test_which_ranks_reach_a_node():
    answers = divergence_by_marker(
        """
        import os
        ddp = int(os.environ.get("RANK", -1)) != -1

        def step(self, args, accelerator, loss, items):
            mark("top")
            if os.environ["LOCAL_RANK"] == "0":
                mark("local-rank-env")
            if int(os.environ.get("RANK", 0)) == 0:
                mark("rank-env")
            if accelerator.is_main_process:
                mark("main-process")
            if accelerator.process_index == 0:
                mark("process-index")
            if dist.get_rank() == 0:
                mark("get-rank")
            if args.local_rank != -1:
                mark("distributed-run")
            if ddp:
                mark("ddp-flag")
            if self._lora_rank > 0:
                mark("lora-rank")
            if self.control.should_log:
                mark("control-flag")
            if loss > 0:
                mark("per-rank-data")
            for item in items[accelerator.process_index]:
                mark("per-rank-loop")
            accelerator.is_local_main_process and mark("short-circuit")
            try:
                pass
            except ValueError:
                mark("except")
            callback = lambda: mark("lambda")
            values = [mark("comprehension") for item in items]
            if dist.get_rank() != 0:
                return
            mark("after-exit")
        """
    )
    assert answers == {
        "top": None,
        "local-rank-env": RankDivergence(Divergence.RANK_GUARD, 'os.environ["LOCAL_RANK"] == "0"'),
        "rank-env": RankDivergence(Divergence.RANK_GUARD, 'int(os.environ.get("RANK", 0)) == 0'),
        "main-process": RankDivergence(Divergence.RANK_GUARD, "accelerator.is_main_process"),
        "process-index": RankDivergence(Divergence.RANK_GUARD, "accelerator.process_index == 0"),
        "get-rank": RankDivergence(Divergence.RANK_GUARD, "dist.get_rank() == 0"),
        "distributed-run": None,
        "ddp-flag": None,
        "lora-rank": None,
        "control-flag": None,
        "per-rank-data": RankDivergence(Divergence.RANK_GUARD, "loss > 0"),
        "per-rank-loop": RankDivergence(Divergence.LOOP, "items[accelerator.process_index]"),
        "short-circuit": RankDivergence(Divergence.SHORT_CIRCUIT, "accelerator.is_local_main_process"),
        "except": RankDivergence(Divergence.EXCEPT_CLAUSE),
        "lambda": RankDivergence(Divergence.IN_LAMBDA),
        "comprehension": RankDivergence(Divergence.COMPREHENSION),
        "after-exit": RankDivergence(Divergence.EARLY_EXIT, "dist.get_rank() != 0"),
    }


def test_a_divergence_shows_its_text():
    assert RankDivergence(Divergence.RANK_GUARD, "rank == 0").text == "it runs only on ranks where `rank == 0` holds"
    assert RankDivergence(Divergence.LOOP, "batches").text == (
        "the number of iterations of `for ... in batches` may differ per rank"
    )
    assert RankDivergence(Divergence.EXCEPT_CLAUSE).text == "it runs only on ranks that raised"


def test_a_name_set_only_under_a_rank_test_parts_the_ranks():
    """The other ranks keep the value the name held before the rank test; a broadcast after it, or
    an assignment on every rank, makes every rank hold the same again."""
    answers = divergence_by_marker(
        """
        import torch.distributed as dist

        def check(deadline, now):
            reason = None
            if dist.get_rank() == 0:
                if now > deadline:
                    reason = "time limit"
            if reason is not None:
                mark("set-on-rank-zero")
            shared = [reason]
            dist.broadcast_object_list(shared, src=0)
            if shared[0] is not None:
                mark("broadcast")
            reason = str(now)
            if reason:
                mark("set-again-on-every-rank")
        """
    )
    assert answers == {
        "set-on-rank-zero": RankDivergence(Divergence.RANK_GUARD, "reason is not None"),
        "broadcast": None,
        "set-again-on-every-rank": None,
    }
