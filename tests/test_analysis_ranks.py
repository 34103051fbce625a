"""trllint.facts.ranks: which tests split the ranks, which values differ by rank, and which tests pair."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from trllint.core.cst import walk
from trllint.core.source import SourceFile
from trllint.facts.ranks import ALL_RANKS, RankFacts, guard_key, rank_facts, reads_rank, splits_ranks
from trllint.semantic.model import SemanticModel


def facts_of(code: str = "") -> RankFacts:
    return RankFacts(cst.parse_module(textwrap.dedent(code)))


@pytest.mark.parametrize(
    "test",
    [
        "accelerator.is_main_process",
        "not self.accelerator.is_local_main_process",
        "state.is_world_process_zero",
        "trainer.is_world_process_zero()",
        "self.args.should_save",
        "training_args.should_save",
        "accelerator.process_index == 0",
        "dist.get_rank() == 0",
        "torch.distributed.get_rank() != 0",
        "args.local_rank in (-1, 0)",
        "args.local_rank not in [-1, 0]",
        "rank > 0",
        "0 < rank",
        "rank < 1",
        "rank % 8 == 0",
        "rank == src",
        "mpu.get_data_parallel_rank() == 0",
        "safe_get_rank() == 0",  # a project's own getter (D-FINE)
        "dist_utils._get_rank() != 0",
        'int(os.environ["LOCAL_RANK"]) == 0',
        'os.environ.get("RANK", "0") == "0"',
        "accelerator.sync_gradients and accelerator.is_main_process and step % every == 0",
        "rank",  # truthy on every rank but the first
    ],
)
def test_splits_ranks(test):
    assert facts_of().splits_ranks(cst.parse_expression(test))


@pytest.mark.parametrize(
    "test",
    [
        "accelerator.num_processes > 1",
        "accelerator.sync_gradients",
        "self.control.should_save",  # the Trainer's flag, not TrainingArguments.should_save
        "args.do_eval",
        "step % args.eval_steps == 0",
        "args.local_rank != -1",  # "is this run distributed?"
        "args.local_rank == -1",
        "local_rank is None",
        "rank >= 0",
        "dist.is_initialized() and dist.get_world_size() > 1",
        "self.lora_r == 0",
        "self._lora_rank > 0",  # a configuration field named like a rank
        "forget_rank == 0",  # no getter: `get_` only after an underscore
        "target_rank() == 0",
        "self._get_rank(layer) == 0",  # a LoRA layer's rank
        "get_world_size_and_rank()[0] == 1",  # torchtune: the tuple's first item is the world size
        'int(os.environ.get("RANK", -1)) != -1',  # nanoGPT's "is this run distributed?"
        'os.environ.get("LOCAL_RANK", "-1") != "-1"',
        "self.control.should_log",  # the Trainer's flag, set alike on every rank
    ],
)
def test_agreed_by_every_rank(test):
    assert not facts_of().splits_ranks(cst.parse_expression(test))


def test_names_assigned_from_rank_tests_and_indexes():
    facts = facts_of(
        """
        rank = dist.get_rank()
        is_master = rank == 0
        self.is_main = accelerator.is_main_process
        bar = tqdm(range(10), disable=not accelerator.is_main_process)
        quiet_bar = tqdm(range(10), disable=args.quiet)
        width = 8
        width = rank
        """
    )
    for test in ("is_master", "not is_master", "rank == 0", "self.is_main", "bar.n % 10 == 0"):
        assert facts.splits_ranks(cst.parse_expression(test)), test
    # A name also assigned something else is not followed; a bar disabled by a flag counts everywhere.
    for test in ("width == 0", "quiet_bar.n % 10 == 0"):
        assert not facts.splits_ranks(cst.parse_expression(test)), test


def test_what_a_function_handed_the_rank_returns_is_not_the_rank():
    facts = facts_of(
        """
        local_rank = int(os.environ["LOCAL_RANK"])
        shard = local_rank % 8
        node = int(local_rank) // 8
        logger = create_logger(output_dir, dist_rank=dist.get_rank(), name=model_name)
        resume_file = auto_resume_helper(output_dir, logger)
        device = torch.device("cuda", local_rank)
        """
    )
    for test in ("local_rank == 0", "shard == 0", "node == 0", "shard"):
        assert facts.splits_ranks(cst.parse_expression(test)), test
    # A logger made for this rank, and what a helper finds with it, are no rank: a test of them
    # is not proven to part the ranks.
    for test in ("resume_file", "logger", "resume_file is not None", "device"):
        assert not facts.splits_ranks(cst.parse_expression(test)), test


def test_a_name_bound_another_way_too_is_not_followed():
    # `step` is a rank index in the loader only through a checkpoint placed on the rank's device;
    # the training loop binds the same name with `for`, as each binding form below binds a name.
    facts = facts_of(
        """
        rank = dist.get_rank()
        device = torch.device("cuda", rank)

        def load_checkpoint(path):
            step = ckpt_step(rank)
            return step

        for step in range(start, total):
            pass
        main = rank == 0
        with open(path) as main:
            pass
        first = rank == 0
        first += 1
        try:
            pass
        except OSError as failed:
            pass
        failed = rank == 0
        lead = rank == 0
        rows = [lead for lead in table]
        chosen = (picked := dist.get_rank())
        """
    )
    # What a function made from the rank (a device) is not the rank: a test of it is no proof.
    for test in ("step == total", "main", "first", "failed", "device == 0"):
        assert not facts.splits_ranks(cst.parse_expression(test)), test
    # A name every binding of which is a rank read is still followed; a comprehension's target
    # is the comprehension's own name, not the one outside it.
    for test in ("rank == 0", "lead", "chosen == 0"):
        assert facts.splits_ranks(cst.parse_expression(test)), test


def test_a_comprehension_over_the_ranks_holds_no_process_rank():
    # The comprehension's `rank` runs over every rank, the same on each process: the table it
    # builds is no rank index, and neither is what a loop over the table's entries reads.
    facts = facts_of(
        """
        owners = {rank: [] for rank in range(world_size)}
        shards = [data[rank::world_size] for rank in range(world_size)]
        mine = [p for i, p in enumerate(params) if i % world_size == dist.get_rank()]
        """
    )
    for test in ("owners", "shards[0]", "owners[0] is None"):
        assert not facts.splits_ranks(cst.parse_expression(test)), test
        assert not facts.reads_rank(cst.parse_expression(test)), test
    assert not facts.reads_rank_index(cst.parse_expression("[x for rank in range(n) if rank > 0]"))
    # A comprehension that reads this process's rank (not a name of its own) still does.
    assert facts.reads_rank_index(cst.parse_expression("mine"))
    assert facts.reads_rank_index(cst.parse_expression("[x for x in range(n) if x == rank]"))


def test_a_loop_variable_named_like_a_rank_is_no_process_rank():
    source = textwrap.dedent(
        """
        def collect(local, counts):
            for rank in range(len(counts)):
                if counts[rank] == 0:
                    continue
                dist.broadcast(local, src=rank)

        def mixed(counts):
            rank = dist.get_rank()
            for rank in range(len(counts)):
                pass
            return counts[rank] == 0

        def own(counts, rank):
            for step in range(3):
                if counts[rank] == 0:
                    continue
        """
    )
    module = cst.parse_module(source)
    facts = RankFacts(module)
    functions = {f.name.value: f for f in module.body if isinstance(f, cst.FunctionDef)}

    def tests(function: cst.FunctionDef) -> list[cst.BaseExpression]:
        found: list[cst.BaseExpression] = []

        class Ifs(cst.CSTVisitor):
            def visit_If(self, node: cst.If) -> None:
                found.append(node.test)

        function.visit(Ifs())
        return found

    # Every process runs every turn of `for rank in ...`: the loop's `rank` splits no ranks.
    assert not any(facts.splits_ranks(test) for test in tests(functions["collect"]))
    # Bound by the loop and by a rank read, or a parameter: still the process's rank.
    returned = functions["mixed"].body.body[-1].body[0].value
    assert facts.splits_ranks(returned)
    assert all(facts.splits_ranks(test) for test in tests(functions["own"]))


def test_a_loop_rank_is_found_under_blocks_and_only_in_its_own_function():
    # The loop-rank pass reads a function's bindings only when its own body loops over a
    # rank-named target: a loop under an if, a with or a try is its own; a nested function's is not.
    source = textwrap.dedent(
        """
        def nested_blocks(counts, world_size):
            with ctx:
                try:
                    if world_size > 1:
                        for rank in range(world_size):
                            if counts[rank] == 0:
                                continue
                except ValueError:
                    pass

        def outer(counts, rank):
            def inner(world_size):
                for rank in range(world_size):
                    pass
            if rank == 0:
                pass
        """
    )
    module = cst.parse_module(source)
    facts = RankFacts(module)
    functions = {f.name.value: f for f in module.body if isinstance(f, cst.FunctionDef)}
    tests = {
        name: [n.test for n in walk.statements(function) if isinstance(n, cst.If)] for name, function in functions.items()
    }
    # `counts[rank] == 0` under the loop: every process runs every turn.
    assert not facts.splits_ranks(tests["nested_blocks"][-1])
    # `outer`'s `rank` is its parameter; the loop that binds `rank` is inner's.
    assert facts.splits_ranks(tests["outer"][-1])


def test_where_a_value_is_placed_is_not_its_rank():
    facts = facts_of(
        """
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        ckpt = torch.load(path, map_location=device)
        start_step = ckpt["step"]
        batch = batch.to(device)
        shard = load_shard(path, device=device, index=int(os.environ["LOCAL_RANK"]))
        """
    )
    # What a function returns when handed the rank (this rank's shard) is this rank's data, not
    # the rank: a test of it is the rank flow's question (per-rank data), not a proven rank test.
    for test in ("start_step == 0", "ckpt['step'] > 10", "batch.numel() > 0", "shard == 0"):
        assert not facts.splits_ranks(cst.parse_expression(test)), test


def test_only_rank_tests():
    facts = facts_of()
    assert facts.only_rank_tests(cst.parse_expression("accelerator.is_main_process and not rank == 1"))
    assert not facts.only_rank_tests(cst.parse_expression("accelerator.is_main_process and step % 10 == 0"))


@pytest.mark.parametrize(
    "first, second",
    [
        ("is_main_process", "not is_main_process"),
        ("self.accelerator.is_main_process", "not accelerator.is_main_process"),
        ("local_rank not in [-1, 0]", "local_rank == 0"),
        ("dist.get_rank() != 0", "dist.get_rank() == 0"),
        ("rank > 0", "rank == 0"),
        # staggered turns: even ranks on entry, odd ranks on exit
        ("rank % 2 == 0", "rank % 2 == 1"),
        # rank 0 first, with a condition every rank answers alike (in either order)
        ('args.local_rank not in [-1, 0] and mode == "train"', 'args.local_rank == 0 and mode == "train"'),
        ('mode == "train" and args.local_rank not in [-1, 0]', 'args.local_rank == 0 and mode  ==  "train"'),
    ],
)
def test_opposite_tests_pair(first, second):
    facts = facts_of()
    key, holds = facts.guard_key(cst.parse_expression(first))
    other_key, other_holds = facts.guard_key(cst.parse_expression(second))
    assert key == other_key and holds == ALL_RANKS - other_holds


def test_different_rank_facts_do_not_pair():
    facts = facts_of()
    main = facts.guard_key(cst.parse_expression("accelerator.is_main_process"))
    local = facts.guard_key(cst.parse_expression("not accelerator.is_local_main_process"))
    assert main[0] != local[0]
    keys = {
        text: facts.guard_key(cst.parse_expression(text))[0]
        for text in ("rank % 8 == 0 and flag", "rank == 0 and flag", "rank % 8 == 0", "rank % 8 != 0 and other")
    }
    assert len(set(keys.values())) == len(keys)  # another modulus, another condition: no pair
    # Two rank tests joined: no one key says which ranks pass.
    assert facts.guard_key(cst.parse_expression("rank == 0 and dist.get_rank() % 2 == 0")) is None
    assert facts.guard_key(cst.parse_expression("rank == 0 and accelerator.is_local_main_process")) is None


def test_main_only_decorators():
    module = cst.parse_module(
        textwrap.dedent(
            """
            @accelerator.on_main_process
            def a(): pass

            @accelerator.on_process(process_index=1)
            def b(): pass

            @torch.no_grad()
            def c(): pass
            """
        )
    )
    names = [RankFacts.main_only_decorator(f) for f in module.body]
    assert names == ["on_main_process", "on_process", None]


def model_of(code: str) -> SemanticModel:
    return SemanticModel.of(SourceFile(text=textwrap.dedent(code), display_path="t.py"))


def test_one_definition_asked_through_the_model():
    model = model_of(
        """
        import os
        ddp = int(os.environ.get("RANK", -1)) != -1
        local_rank = int(os.environ["LOCAL_RANK"])
        """
    )
    assert rank_facts(model) is rank_facts(model)  # built once per file
    assert RankFacts.of(model.source) is rank_facts(model)
    assert splits_ranks(model, cst.parse_expression("local_rank == 0"))
    assert splits_ranks(model, cst.parse_expression("accelerator.is_main_process"))
    # Every rank agrees on `ddp`: a branch on it lets all ranks in or none.
    assert not splits_ranks(model, cst.parse_expression("ddp"))
    assert not splits_ranks(model, cst.parse_expression("not ddp"))


@pytest.mark.parametrize(
    "expr, differs",
    [
        ("accelerator.process_index", True),
        ('int(os.environ["LOCAL_RANK"]) * shard_size', True),
        ("buckets[dist.get_rank()]", True),
        ("1.0 if accelerator.is_main_process else 0.0", True),
        ("len(batch) if rank == 0 else 0", True),
        ("args.local_rank != -1", False),  # reads the rank, answered alike on every rank
        ("flag and args.local_rank != -1", False),
        ("self._lora_rank", False),
        ("loss.mean()", False),  # this rank's data, but not the rank: the rank flow's question
        ('"rank"', False),
    ],
)
def test_reads_rank(expr, differs):
    assert reads_rank(model_of(""), cst.parse_expression(expr)) is differs


def test_rank_read_from_the_environment_pairs_across_spellings():
    model = model_of("")
    key, holds = guard_key(model, cst.parse_expression('os.environ["LOCAL_RANK"] == "0"'))
    other_key, other_holds = guard_key(model, cst.parse_expression('int(os.getenv("LOCAL_RANK", 0)) != 0'))
    assert key == other_key == "LOCAL_RANK"
    assert holds == ALL_RANKS - other_holds == frozenset({0})


MATRIX_RANKS = """
    import torch
    import torch.nn as nn
    from peft import LoraConfig

    class LoRALinear(nn.Module):
        def __init__(self, base, rank=8, alpha=16):
            super().__init__()
            self.rank = rank
            self.scaling = alpha / rank
            self.lora_a = nn.Parameter(torch.zeros(rank, base.in_features))

        def forward(self, x):
            if self.rank > 0:
                return x

    def adapter_config(config):
        r = config.rank
        if r > 0:
            return LoraConfig(r=r)

    def adapter_size(model_args, hidden):
        return nn.Linear(hidden, model_args.rank)

    def worker(rank, world_size, config):
        if rank == 0:
            print(config.rank)

    def setup(args):
        process = args.rank
        return process == 0
"""


def _test_in(facts_source: str, function: str, text: str) -> cst.BaseExpression:
    """The first expression spelled ``text`` inside ``function`` of the module."""
    module = cst.parse_module(textwrap.dedent(facts_source))
    found: list[cst.BaseExpression] = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node.name.value == function

        def visit_Comparison(self, node: cst.Comparison) -> None:
            if module.code_for_node(node) == text:
                found.append(node)

    module.visit(Find())
    return found[0], RankFacts(module)


@pytest.mark.parametrize(
    "function, test, splits",
    [
        ("forward", "self.rank > 0", False),  # a LoRA layer's rank: `self.rank = rank` with rank=8
        ("adapter_config", "r > 0", False),  # `r = config.rank` handed to LoraConfig(r=r)
        ("worker", "rank == 0", True),  # a process's rank, in the same file
        ("setup", "process == 0", True),  # `args.rank`: only `model_args.rank` sized a layer
    ],
)
def test_a_matrix_rank_is_no_process_rank(function, test, splits):
    node, facts = _test_in(MATRIX_RANKS, function, test)
    assert facts.splits_ranks(node) is splits


def test_a_config_rank_with_no_matrix_use_stays_a_process_rank():
    node, facts = _test_in("def f(config):\n    r = config.rank\n    if r > 0:\n        pass\n", "f", "r > 0")
    assert facts.splits_ranks(node)
