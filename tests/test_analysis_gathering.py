"""The rank flows (trllint.facts.rank_flow, scope_flow): per-rank versus gathered values, and where
TRL004 puts a gather (its gather_sites)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest


from trllint.facts.distributed import runs_distributed
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank
from trllint.facts.scope_flow import RankFlow
from trllint.rules.trl004_ungathered_metric.gather_sites import GatherUnsafe, gather_sites
from trllint.core.source import SourceFile
from trllint.semantic.model import SemanticModel, imports_of


def _flow(code: str, function: str = "step") -> tuple[SourceFile, RankFlow]:
    source = SourceFile(text=textwrap.dedent(code), display_path="t.py")
    scope = next(node for node in _functions(source.module) if node.name.value == function)
    return source, rank_flows(SemanticModel.of(source)).flow(scope)


def _functions(module: cst.Module) -> list[cst.FunctionDef]:
    found: list[cst.FunctionDef] = []

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    module.visit(Collect())
    return found


def _last_value(flow: RankFlow) -> tuple[cst.BaseExpression, cst.CSTNode]:
    """The value of the function's last statement (``log(value)`` or ``x = value``)."""
    small, line = flow.statements[-1]
    value = small.value
    if isinstance(value, cst.Call):
        value = value.args[0].value
    return value, line


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def test_batch_values_are_per_rank_and_gathers_make_them_global():
    _, flow = _flow(
        """
        def step(self, model, inputs, mode="train"):
            logits = model(**inputs).logits
            local = logits.mean()
            everything = self.accelerator.gather_for_metrics(logits)
            derived = everything.view(-1, 2).mean(dim=1)
            log(derived.mean().item())
        """
    )
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.GLOBAL
    assert flow.binding("local", line).state == Rank.PER_RANK
    assert flow.binding("mode", line).state == Rank.NO_DATA  # a parameter with a default is no data


def test_in_place_all_reduce_and_loop_counters():
    _, flow = _flow(
        """
        import torch.distributed as dist

        def step(loader):
            total = 0
            for index, batch in enumerate(loader):
                total += batch.sum()
            dist.all_reduce(total)
            log(index + total.item())
        """
    )
    value, line = _last_value(flow)
    assert flow.binding("batch", line).state == Rank.PER_RANK
    assert flow.binding("index", line).state == Rank.NO_DATA
    assert flow.state(value, line) == Rank.GLOBAL



@pytest.mark.parametrize(
    "imports, reduce",
    [
        ("import torch.distributed as dist", "dist.all_reduce(total)"),
        ("import torch", "torch.distributed.all_reduce(total)"),
        ("import deepspeed", "deepspeed.comm.all_reduce(total, op=deepspeed.comm.ReduceOp.AVG)"),
        ("from deepspeed import comm", "comm.all_reduce(total)"),
        ("import deepspeed", "deepspeed.comm.all_reduce(total.clone())"),
    ],
)
def test_a_reduction_of_torch_distributed_api_in_place(imports, reduce):
    """torch.distributed's collectives, spelled through ``dist``, ``torch.distributed`` or
    ``deepspeed.comm`` (the same API), reduce their tensor in place; a ``.clone()`` is a copy."""
    _, flow = _flow(
        f"""
        {imports}

        def step(loader):
            total = 0
            for batch in loader:
                total += batch.sum()
            {reduce}
            log(total.item())
        """
    )
    value, line = _last_value(flow)
    assert flow.state(value, line) == (Rank.PER_RANK if "clone" in reduce else Rank.GLOBAL)


@pytest.mark.parametrize("reduce, reduced", [
    ("dist.all_reduce(total), dist.all_reduce(count)", True),
    ("dist.all_reduce(count), print(total)", False),
])
def test_in_place_reductions_written_as_one_tuple_statement(reduce, reduced):
    """``dist.all_reduce(a), dist.all_reduce(b)``: each call of the tuple runs, under a test too."""
    _, flow = _flow(
        f"""
        import torch.distributed as dist

        def step(loader, distributed):
            total, count = 0, 0
            for batch in loader:
                total += batch.sum()
                count += batch.numel()
            if distributed:
                {reduce}
            log(total.item())
        """
    )
    value, line = _last_value(flow)
    assert flow.state(value, line) == (Rank.GLOBAL if reduced else Rank.PER_RANK)


def test_a_loop_over_a_loader_with_no_sampler_reads_the_same_data_on_every_rank():
    """No sampler, batch sampler or shuffle: the whole set, in order, on each rank; a sampler,
    a shuffle or a data set cut by rank makes it this rank's."""
    _, flow = _flow(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def step(valid_set, rank):
            whole_loader = DataLoader(valid_set, batch_size=4, sampler=None)
            sampled_loader = DataLoader(valid_set, batch_size=4, sampler=DistributedSampler(valid_set))
            shuffled_loader = DataLoader(valid_set, batch_size=4, shuffle=True)
            cut_loader = DataLoader(valid_set.shard(num_shards=8, index=rank), batch_size=4)
            for a in whole_loader:
                pass
            for b in sampled_loader:
                pass
            for c in shuffled_loader:
                pass
            for d in cut_loader:
                pass
            log(a)
        """
    )
    _, line = _last_value(flow)
    assert flow.binding("a", line).state == Rank.NO_DATA
    assert flow.binding("b", line).state == Rank.PER_RANK
    assert flow.binding("c", line).state == Rank.PER_RANK
    assert flow.binding("d", line).state == Rank.PER_RANK


def test_gather_sites_go_before_the_last_reduction_or_into_the_assignment():
    _, flow = _flow(
        """
        def step(self, completion_mask, chosen_rewards, rejected_rewards):
            length = completion_mask.sum(1).float().mean().item()
            log((chosen_rewards - rejected_rewards).mean().cpu() + length + chosen_rewards.sum().item())
        """
    )
    value, line = _last_value(flow)
    sites = {_code(site.tensor): site.reduce_after for site in gather_sites(flow, value, line)}
    # Each rank's own 0-d result is gathered (the same shape on every rank), then reduced again.
    assert sites == {
        "(chosen_rewards - rejected_rewards).mean()": "mean",
        "completion_mask.sum(1).float().mean()": "mean",
        "chosen_rewards.sum()": "sum",
    }


def test_gather_sites_say_why_a_fix_is_unsafe_or_cast_an_integer():
    _, flow = _flow(
        """
        def step(self, logits, label_counts, rewards, outputs):
            log(logits.mean(-1).cpu() + label_counts.item() + rewards.std().item() + outputs.logits.detach().item())
        """
    )
    value, line = _last_value(flow)
    sites = {_code(site.tensor): site for site in gather_sites(flow, value, line)}
    assert sites["logits.mean(-1)"].unsafe is GatherUnsafe.REDUCED_OVER_DIMENSION
    assert sites["logits.mean(-1)"].unsafe_reason == (
        "mean(...) over a dimension leaves a tensor whose shape may differ per rank"
    )
    assert sites["label_counts"].cast_to_float and sites["label_counts"].keeps_single_process_value
    assert sites["rewards.std()"].unsafe is GatherUnsafe.SPREAD_STATISTIC
    assert sites["rewards.std()"].unsafe_reason == "the mean of the ranks' std() is not the std() over all ranks"
    assert sites["outputs.logits.detach()"].unsafe is None
    assert not sites["outputs.logits.detach()"].cast_to_float  # a model's logits are floating


def test_a_scalar_without_reduction_is_gathered_then_averaged():
    _, flow = _flow(
        """
        def step(outputs):
            loss = outputs.loss
            log(loss.detach().item())
        """
    )
    value, line = _last_value(flow)
    (site,) = gather_sites(flow, value, line)
    assert _code(site.tensor) == "loss.detach()"
    assert site.reduce_after == "mean" and site.keeps_single_process_value


def test_a_helper_that_returns_a_gathered_value_is_global():
    _, flow = _flow(
        """
        def global_mean(self, x):
            return self.accelerator.reduce(x, reduction="mean").item()

        def step(self, logits):
            log(self.global_mean(logits))
        """
    )
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.GLOBAL


def test_runs_distributed():
    assert runs_distributed(SourceFile(text="import torch.distributed as dist\n", display_path="a.py"))
    assert runs_distributed(SourceFile(text="class T(DPOTrainer):\n    pass\n", display_path="b.py"))
    assert not runs_distributed(SourceFile(text="import torch\nimport wandb\n", display_path="c.py"))


def test_an_element_of_an_iterable_gets_no_gather_site():
    # ms-swift: `for key, value in compute_sdar_loss(...)[1].items()`: the values are `.item()`
    # floats; gather_for_metrics(value).mean() would fail on them. A loop element may be a number.
    _, flow = _flow(
        """
        def step(self, model, inputs):
            metrics = local_stats(model(**inputs).logits)
            for key, value in metrics.items():
                log(value)
        """
    )
    small, line = flow.statements[-1]
    value = small.value.args[0].value
    assert flow.state(value, line) == Rank.PER_RANK
    assert gather_sites(flow, value, line) == []


def test_states_are_worked_out_only_for_what_is_read():
    asked: list[str] = []

    def is_global_call(call: cst.Call) -> bool:
        asked.append(_code(call.func))
        return False

    source = SourceFile(text=textwrap.dedent(
        """
        def step(batch):
            unused = helper_a(batch)
            other = helper_b(batch)
            loss = helper_c(batch).mean()
            log(loss.item())
        """
    ), display_path="t.py")
    scope = _functions(source.module)[0]
    flow = RankFlow(scope, imports_of(source), is_global_call=is_global_call)
    assert asked == []  # building the flow reads syntax only
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.PER_RANK
    assert "helper_c" in asked and "helper_a" not in asked and "helper_b" not in asked


def test_a_long_chain_of_assignments_is_followed_without_deep_recursion():
    lines = ["def step(batch):", "    x = batch.mean()"]
    lines += ["    x = x * 2"] * 3000
    lines += ["    log(x.item())"]
    _, flow = _flow("\n".join(lines) + "\n")
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.PER_RANK
    lines[1500] = "    x = accelerator.gather(x)"
    _, flow = _flow("\n".join(lines) + "\n")
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.GLOBAL


def test_a_recursive_helper_keeps_its_data_parameter_per_rank():
    _, flow = _flow(
        """
        def step(batch):
            if len(batch) > 1:
                step(batch[1:])
            log(batch.mean().item())
        """
    )
    value, line = _last_value(flow)
    assert flow.state(value, line) == Rank.PER_RANK


def test_the_rank_itself_differs_per_rank_and_tests_every_rank_agrees_on_do_not():
    source, flow = _flow(
        """
        import os

        def step(self, rank, batch):
            local = int(os.environ["LOCAL_RANK"])
            offset = local * shard_size
            distributed = int(os.environ.get("RANK", -1)) != -1
            index = self.accelerator.process_index
            width = self._lora_rank
            log(offset, distributed, index, width, rank)
        """
    )
    _, line = _last_value(flow)
    states = {name: flow.state_of_name(name, line) for name in ("offset", "distributed", "index", "width", "rank")}
    assert states == {
        "offset": Rank.PER_RANK,  # built from the environment's rank
        "distributed": Rank.NO_DATA,  # "is this run distributed?": the same on every rank
        "index": Rank.PER_RANK,
        "width": Rank.NO_DATA,  # a configuration field named like a rank
        "rank": Rank.PER_RANK,  # a parameter holding the rank (`def worker(rank, world_size)`)
    }
    assert not flow.depends_on_rank(cst.parse_expression("args.local_rank != -1"), line)
    assert flow.depends_on_rank(cst.parse_expression("args.local_rank == 0"), line)


def test_an_object_a_rank_test_picks_or_a_device_places_holds_no_rank_data():
    _, flow = _flow(
        """
        import os
        from torch.nn.parallel import DistributedDataParallel

        def step(model, batch):
            local_rank = int(os.environ["LOCAL_RANK"])
            device = torch.device("cuda", local_rank)
            wrapped = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
            moved = model.to(device)
            average = EMA(wrapped) if local_rank in (-1, 0) else None
            total = torch.zeros(1, device=device)
            output = wrapped(batch.to(device))
            kept = output if local_rank == 0 else None
            shard = 1.0 if local_rank == 0 else local_rank
            log(wrapped, moved, average, total, output, kept, shard)
        """
    )
    _, line = _last_value(flow)
    names = ("wrapped", "moved", "average", "total", "output", "kept", "shard")
    assert {name: flow.state_of_name(name, line) for name in names} == {
        "wrapped": Rank.NO_DATA,  # the same model on every rank, each on its own device
        "moved": Rank.NO_DATA,
        "average": Rank.NO_DATA,  # the rank test picks the object, the object is no rank's data
        "total": Rank.NO_DATA,
        "output": Rank.PER_RANK,  # this rank's batch, wherever it is placed
        "kept": Rank.PER_RANK,  # an arm that holds this rank's data still does
        "shard": Rank.PER_RANK,  # and so does an arm that is the rank
    }


def _last_state(code: str, function: str = "step") -> Rank:
    _, flow = _flow(code, function)
    value, line = _last_value(flow)
    return flow.state(value, line)


def test_reduced_in_place_by_a_loop_a_helper_or_a_broadcast():
    head = """
        import torch.distributed as dist
        from tqdm import tqdm

        def mean_in_place(t):
            dist.all_reduce(t)
            t /= dist.get_world_size()

        def reduce_a_copy(t):
            t = t.clone()
            dist.all_reduce(t)

    """
    cases = {
        "for t in (correct, total):\n        dist.all_reduce(t)\n    log(correct / total)": Rank.GLOBAL,
        "for t in (total,):\n        dist.all_reduce(t)\n    log(correct / total)": Rank.PER_RANK,
        "for k in sums:\n        dist.all_reduce(sums[k])\n    log(sums)": Rank.GLOBAL,
        "for v in sums.values():\n        dist.all_reduce(v)\n    log(sums)": Rank.GLOBAL,
        # The iterable in another spelling: a progress bar, a sorted copy, a name bound to either.
        "for k in tqdm(sorted(sums)):\n        dist.all_reduce(sums[k])\n    log(sums)": Rank.GLOBAL,
        "pair = (correct, total)\n    for t in pair:\n        dist.all_reduce(t)\n    log(correct / total)": Rank.GLOBAL,
        "keys = list(batch)\n    for k in keys:\n        dist.all_reduce(sums[k])\n    log(sums)": Rank.PER_RANK,
        # An element reduced in place is read reduced in the same turn, until its container or key is rebound.
        "for k in sums:\n        dist.all_reduce(sums[k].detach())\n        log(sums[k] / 2)": Rank.GLOBAL,
        "for k in sums:\n        dist.all_reduce(sums[k].clone())\n        log(sums[k] / 2)": Rank.PER_RANK,
        "for k in sums:\n        dist.all_reduce(sums[k])\n        k = 'correct'\n        log(sums[k])": Rank.PER_RANK,
        "for k in sums:\n        dist.all_reduce(sums[k])\n        sums = {'correct': correct}\n        log(sums[k])": Rank.PER_RANK,
        "mean_in_place(correct)\n    log(correct)": Rank.GLOBAL,
        "reduce_a_copy(correct)\n    log(correct)": Rank.PER_RANK,
        "dist.broadcast(correct, 0)\n    log(correct)": Rank.GLOBAL,
    }
    for body, expected in cases.items():
        code = head + (
            "def step(batch):\n"
            "    correct = (batch['logits'].argmax(-1) == batch['labels']).sum()\n"
            "    total = batch['labels'].sum()\n"
            "    sums = {'correct': correct}\n"
            f"    {body}\n"
        )
        assert _last_state(textwrap.dedent(head) + textwrap.dedent(code[len(head):])) == expected, body


def test_counters_rates_and_an_exhausted_loader_hold_no_rank_data():
    code = """
        import time

        def step(batch_idx: int, batch_size, batch_losses, start):
            {body}
    """
    cases = {
        "log(batch_idx)": Rank.NO_DATA,  # typed int: a counter
        "log(batch_size)": Rank.NO_DATA,  # named as a size
        "log(batch_losses)": Rank.PER_RANK,
        "log(batch_losses.sum() / (time.time() - start))": Rank.NO_DATA,  # a rate over wall-clock time
        "log(batch_losses.sum() / batch_size)": Rank.PER_RANK,
        "x = next(iter(batch_losses), None)\n    log(x is None)": Rank.NO_DATA,
        "x = next(iter(batch_losses))\n    log(x > 0)": Rank.PER_RANK,
    }
    for body, expected in cases.items():
        assert _last_state(textwrap.dedent(code).replace("{body}", body)) == expected, body


def test_a_collection_of_loaders_holds_the_same_loaders_and_names_on_every_rank():
    code = """
        def step(val_loaders, train_loader):
            {body}
    """
    cases = {
        "for name in sorted(val_loaders, key=len):\n        log(name)": Rank.NO_DATA,
        "for name, loader in val_loaders.items():\n        log(name)": Rank.NO_DATA,
        # A loop over one loader of the collection visits this rank's shard of it.
        "for name, loader in val_loaders.items():\n        for batch in loader:\n            log(batch)": Rank.PER_RANK,
        "for batch in val_loaders['qm9']:\n        log(batch)": Rank.PER_RANK,
        "for batch in train_loader:\n        log(batch)": Rank.PER_RANK,
    }
    for body, expected in cases.items():
        assert _last_state(textwrap.dedent(code).replace("{body}", body)) == expected, body


def _states_at_end(code: str, names: tuple[str, ...], function: str = "step") -> dict[str, Rank]:
    _, flow = _flow(code, function)
    _, line = _last_value(flow)
    return {name: flow.state_of_name(name, line) for name in names}


def test_each_element_of_a_returned_tuple_holds_what_its_own_returns_put_there():
    states = _states_at_end(
        """
        class PairTrainer:
            def loss(self, chosen_logps, rejected_logps, use_baseline):
                margins = chosen_logps - rejected_logps
                if use_baseline:
                    baseline = self.accelerator.gather(margins.mean().detach()).mean()
                else:
                    baseline = torch.zeros((), device=margins.device)
                return -margins + baseline, margins.detach(), baseline, torch.as_tensor(self.moments.mean)

            def pair(self, a, b):
                return a - b, self.accelerator.reduce(a.sum())

            def step(self, inputs):
                chosen, rejected = model(**inputs).logits.unbind(-1)
                losses, margins, baseline, shift = self.loss(chosen, rejected, True)
                gap, total = self.pair(chosen, rejected)
                first, *rest = self.pair(chosen, rejected)
                log(losses, margins, baseline, shift, gap, total, first)
        """,
        ("losses", "margins", "baseline", "shift", "gap", "total", "first"),
    )
    assert states == {
        "losses": Rank.PER_RANK,
        "margins": Rank.PER_RANK,
        "baseline": Rank.GLOBAL,  # gathered in one arm, read from no argument in the other
        "shift": Rank.NO_DATA,  # reads no argument: what the caller passes cannot reach it
        "gap": Rank.PER_RANK,  # `a - b`: the arguments decide, and the caller's are per-rank
        "total": Rank.GLOBAL,
        # A starred target: read as the whole call, which `returns_global` reads as gathered
        # (the tuple's gathered element next to parameters whose names say nothing).
        "first": Rank.GLOBAL,
    }


def test_a_returned_tuple_read_element_wise_only_when_every_return_has_that_shape():
    states = _states_at_end(
        """
        class Trainer:
            def loss(self, logits):
                if logits is None:
                    return None
                return logits.mean(), self.accelerator.gather(logits.mean()).mean()

            def step(self, inputs):
                local, gathered = self.loss(model(**inputs).logits)
                log(local, gathered)
        """,
        ("local", "gathered"),
    )
    assert states == {"local": Rank.PER_RANK, "gathered": Rank.PER_RANK}  # the whole call's state


def test_a_data_named_parameter_reads_as_what_the_files_callers_hand_it():
    code = """
        import torch.distributed as dist

        def log_losses(loss_dict, total_loss_dict):
            log(loss_dict, total_loss_dict)

        def train_step(schedule, data_iterator, model):
            losses = schedule(data_iterator, model)
            reported = {}
            for key in losses[0]:
                total = torch.stack([x[key] for x in losses]).sum(dim=0)
                dist.all_reduce(total)
                reported[key] = total[0] / total[1]
            return reported, model.lr

        def train(schedule, data_iterator, model):
            total_loss_dict = {}
            loss_dict, lr = train_step(schedule, data_iterator, model)
            log_losses(loss_dict, total_loss_dict)
        """
    # Every call of the file hands it no data: the name is no evidence against its callers.
    assert _states_at_end(code, ("loss_dict", "total_loss_dict"), "log_losses") == {
        "loss_dict": Rank.NO_DATA,
        "total_loss_dict": Rank.NO_DATA,
    }
    # One call hands it this rank's loss: per-rank, as its name says.
    per_rank = code + "\n        def evaluate(model, batch):\n            log_losses({'lm': model(**batch).loss}, {})\n"
    assert _states_at_end(per_rank, ("loss_dict", "total_loss_dict"), "log_losses") == {
        "loss_dict": Rank.PER_RANK,
        "total_loss_dict": Rank.NO_DATA,
    }


def test_an_unknown_call_on_this_ranks_data_does_not_contradict_a_parameters_name():
    states = _states_at_end(
        """
        class Trainer:
            def summarize(self, rewards_local):
                log(rewards_local)

            def step(self, inputs):
                rewards = self.reward_model(**inputs)  # inherited, unseen: unknown
                self.summarize(rewards)
        """,
        ("rewards_local",),
        "summarize",
    )
    assert states == {"rewards_local": Rank.PER_RANK}


def test_scales_and_coefficients_named_after_a_loss_are_settings():
    states = _states_at_end(
        """
        def step(loss_scale, kl_coef, reward_coeff, loss_values):
            log(loss_scale, kl_coef, reward_coeff, loss_values)
        """,
        ("loss_scale", "kl_coef", "reward_coeff", "loss_values"),
    )
    assert states == {
        "loss_scale": Rank.NO_DATA,
        "kl_coef": Rank.NO_DATA,
        "reward_coeff": Rank.NO_DATA,
        "loss_values": Rank.PER_RANK,
    }


@pytest.mark.parametrize(
    "use",
    [
        "parser.add_argument('--outputs', log_outputs=True)",  # a keyword argument's name
        "def inner(log_outputs=None):\n                pass",  # a parameter's
        "first = log_outputs = None",  # a name assigned to
        "flag = args.log_outputs",  # another object's attribute
        "trainer.log_outputs(model(**batch))",  # another object's method, called
    ],
)
def test_a_function_is_called_or_handed_on_only_where_the_flows_read_its_own_name(use: str):
    code = """
        def log_outputs(outputs_dict):
            log(outputs_dict)

        def train(parser, args, trainer, model, batch):
            log_outputs({})
            USE
        """
    # None of these is this file's function: its one call still says what it holds.
    assert _states_at_end(code.replace("USE", use), ("outputs_dict",), "log_outputs") == {
        "outputs_dict": Rank.NO_DATA
    }, use


def test_a_function_also_handed_on_as_a_value_keeps_its_parameters_name_reading():
    code = """
        def log_outputs(outputs_dict):
            log(outputs_dict)

        def train(trainer_cls):
            log_outputs({})
            return trainer_cls(on_step=HANDED)
        """
    # Called here with no data only: what it holds is what that call hands it.
    assert _states_at_end(code.replace("HANDED", "None"), ("outputs_dict",), "log_outputs") == {
        "outputs_dict": Rank.NO_DATA
    }
    # Also handed to a trainer that calls it with what it computes: the callers are not all seen.
    for handed in ("log_outputs", "lambda outputs: log_outputs(outputs)", "[log_outputs(o) for o in outputs]"):
        assert _states_at_end(code.replace("HANDED", handed), ("outputs_dict",), "log_outputs") == {
            "outputs_dict": Rank.PER_RANK
        }, handed



@pytest.mark.parametrize(
    "imports, built, synced",
    [
        ("from torchmetrics import MeanMetric", "MeanMetric().to(batch['x'].device)", True),
        ("import torchmetrics", "torchmetrics.classification.MulticlassAccuracy(num_classes=10)", True),
        ("from torchmetrics import Metric\nclass Errors(Metric): pass", "Errors().cuda()", True),
        # Named like one, but no torchmetrics class: its compute() talks to no other rank.
        ("from mymetrics import MeanMetric", "MeanMetric().to(batch['x'].device)", False),
        ("import torch\nclass Errors(torch.nn.Module): pass", "Errors().cuda()", False),
    ],
)
def test_a_torchmetrics_metric_syncs_across_ranks_when_computed(imports, built, synced):
    code = f"""
{imports}

def step(batch):
    metric = {built}
    metric.update(batch['loss'])
    log(metric.compute())
"""
    assert (_last_state(code) == Rank.GLOBAL) is synced



@pytest.mark.parametrize(
    "text",
    [
        "from torch.nn.parallel import DistributedDataParallel as DDP\n",
        "from torch import nn\nmodel = nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n",
        "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model)\n",
    ],
)
def test_a_ddp_wrap_runs_distributed(text):
    # The process group may come from a helper of the project: the wrap needs one.
    assert runs_distributed(SourceFile(text=text, display_path="train.py"))


@pytest.mark.parametrize(
    "text",
    [
        "import torch\nmodel = torch.nn.DataParallel(model)\n",  # one process, several GPUs
        "import torch\n# model = torch.nn.parallel.DistributedDataParallel(model)\n",
    ],
)
def test_data_parallel_or_a_commented_wrap_does_not(text):
    assert not runs_distributed(SourceFile(text=text, display_path="train.py"))


def test_a_name_bound_twice_links_no_module():
    # `x = model` then `x = optimizer`: x is no other name for the model, nor the model for x.
    from trllint.facts.module_names import shown_a_module

    text = (
        "model.requires_grad_(True)\n"
        "self.ema = EMA(model)\n"
        "x = model\n"
        "x = optimizer\n"
        "self.net = net\n"
        "self.net.parameters()\n"
    )
    model = SemanticModel.of(SourceFile(text=text, display_path="train.py"))
    assert shown_a_module(model, "self.ema")  # built around a module the code uses as one
    assert shown_a_module(model, "net")  # another name for a module
    assert not shown_a_module(model, "x")
    assert not shown_a_module(model, "optimizer")


OWN_METERS = """
    import torch
    import torch.distributed as dist


    class Meter:
        def __init__(self):
            self.count, self.total = 0, 0.0

        def synchronize(self):
            t = torch.tensor([self.count, self.total], device="cuda")
            dist.all_reduce(t)
            self.count, self.total = int(t[0]), t[1].item()

        @property
        def avg(self):
            return self.total / self.count


    class LossMeter(Meter):
        def synchronize(self):  # a reduced copy handed back: the meter keeps its own sums
            t = torch.tensor([self.count, self.total], device="cuda")
            dist.all_reduce(t)
            self.syncs += 1
            return t


    class RankZeroMeter(Meter):
        def synchronize(self):  # only rank 0 ends with the sums
            t = torch.tensor([self.count, self.total], device="cuda")
            dist.reduce(t, dst=0)
            self.count, self.total = int(t[0]), t[1].item()


    class Trainer:
        def __init__(self):
            self.history = {}

        def synchronize(self, batch):  # a dict's method of the same name as Meter's: no meter here
            self.history.synchronize(batch)


    class Meters:
        def __init__(self):
            self.meters = {}

        def add(self, name):
            self.meters[name] = Meter()

        def sync_all(self):
            for meter in self.meters.values():
                meter.synchronize()

        def report(self, other):
            other.synchronize()  # syncs another object, not this one


    def step(batch):
        accuracy = Meter()
        loss_meter = LossMeter()
        meters = Meters()
        accuracy.synchronize()
        loss_meter.synchronize()
        meters.sync_all()
        meters.report(accuracy)
        log(accuracy.avg, loss_meter.avg, meters.meters)
"""


def test_a_method_that_syncs_its_object_makes_the_object_global():
    from trllint.facts.object_syncs import object_syncing_methods

    source, flow = _flow(OWN_METERS)
    assert object_syncing_methods(source.module, imports_of(source)) == {"Meter": ["synchronize"], "Meters": ["sync_all"]}
    small, line = flow.statements[-1]
    accuracy, loss, meters = (arg.value for arg in small.value.args)
    assert flow.state(accuracy, line) == Rank.GLOBAL
    assert flow.state(loss, line) != Rank.GLOBAL
    assert flow.state(meters, line) == Rank.GLOBAL


def test_a_comprehension_s_own_names_hide_the_scope_s():
    _, flow = _flow(
        """
        def step(batch, gathered):
            for k in batch:
                pass
            rebuilt = {k: v for k, v in zip(names, gathered)}
            kept = [k for k in batch]
            scaled = [k * 2 for x in gathered]
            log(rebuilt, kept, scaled)
        """
    )
    _, line = _last_value(flow)
    assert {name: flow.state_of_name(name, line) for name in ("k", "rebuilt", "kept", "scaled")} == {
        "k": Rank.PER_RANK,  # the loop's key of this rank's batch
        "rebuilt": Rank.NO_DATA,  # its own `k` and `v`, from what it iterates
        "kept": Rank.PER_RANK,  # it iterates this rank's batch
        "scaled": Rank.PER_RANK,  # `k` is not its own: the loop's
    }
    assert not flow.depends_on_rank(cst.parse_expression("any(k > 0 for k in gathered)"), line)
    assert flow.depends_on_rank(cst.parse_expression("any(x > k for x in gathered)"), line)


def test_an_imported_function_is_read_by_its_own_name_not_its_alias():
    # lightly's benchmark module: `from lightly.utils.dist import gather as lightly_gather` gathers;
    # another function imported as `gather` does not (an unknown library call: no rank data known).
    code = """
        from lightly.utils.dist import {imported} as {alias}

        def step(self, model, inputs):
            logits = model(**inputs).logits
            log(torch.cat({alias}(logits), dim=0))
        """
    assert _last_state(code.format(imported="gather", alias="lightly_gather")) == Rank.GLOBAL
    assert _last_state(code.format(imported="split_batches", alias="gather")) == Rank.NO_DATA
