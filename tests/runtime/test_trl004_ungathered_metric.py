"""TRL004 at runtime: the buggy scenario logs rank 0's slice, the trllint-fixed one the true mean.

The test writes the data itself and computes the true first-step accuracy and loss over all
ranks' examples: rank 0's shard is labelled so that the model (which starts as ``logit = x``) gets
it all right, the other ranks' shards all wrong. One step covers the whole set (four examples per
device), so the first logged step is fully determined by the data.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.runtime.conftest import gpu_count
from tests.runtime.launch import CPU_DDP, RULES, accelerate_launch, buggy_and_fixed, run_trllint

RULE_FOLDER = "trl004_ungathered_metric"
PER_DEVICE_BATCH_SIZE = 4  # as in scenario.py


def make_data(num_processes: int) -> dict[str, list]:
    """Rank 0's shard (the first batch) is classified right, every other rank's shard wrong."""
    x, y = [], []
    for index in range(PER_DEVICE_BATCH_SIZE * num_processes):
        value = 0.5 + (index % PER_DEVICE_BATCH_SIZE) * 0.75
        right = index < PER_DEVICE_BATCH_SIZE
        x.append(value if index % 2 == 0 else -value)
        y.append(int((x[-1] > 0) == right))
    return {"x": x, "y": y}


def first_step_truth(data: dict[str, list], examples: range) -> dict[str, float]:
    """Accuracy and BCE loss of ``logit = x`` over ``examples``, computed without torch."""
    correct = [float((data["x"][i] > 0) == bool(data["y"][i])) for i in examples]
    losses = [math.log1p(math.exp(-data["x"][i] if data["y"][i] else data["x"][i])) for i in examples]
    return {"train/accuracy": sum(correct) / len(correct), "train/loss": sum(losses) / len(losses)}


def first_logged_step(script: Path, data: dict, launch_args: tuple[str, ...], *, cpu: bool) -> dict:
    data_path = script.parent / "data.json"
    data_path.write_text(json.dumps(data))
    out = script.parent / "logged.json"
    run = accelerate_launch(script, launch_args, script_args=("--data", str(data_path), "--out", str(out)), cpu=cpu)
    assert run.ok, run.output[-4000:]
    record = json.loads(out.read_text())
    assert record["logged"], "the scenario logged nothing"
    return record["logged"][0] | {"num_processes": record["num_processes"]}


def check_buggy_and_fixed(tmp_path: Path, num_processes: int, launch_args: tuple[str, ...], *, cpu: bool) -> None:
    data = make_data(num_processes)
    truth = first_step_truth(data, range(len(data["x"])))
    rank0_slice = first_step_truth(data, range(PER_DEVICE_BATCH_SIZE))
    assert truth["train/accuracy"] != pytest.approx(rank0_slice["train/accuracy"])

    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "TRL004", tmp_path)
    assert "accelerator.gather(correct.mean()).mean().item()" in "".join(fixed.read_text().split())

    logged = first_logged_step(buggy, data, launch_args, cpu=cpu)
    assert logged["num_processes"] == num_processes
    for key in ("train/accuracy", "train/loss"):
        # Rank 0 logged its own shard's number, not the run's.
        assert logged[key] != pytest.approx(truth[key]), key
        assert logged[key] == pytest.approx(rank0_slice[key]), key

    logged = first_logged_step(fixed, data, launch_args, cpu=cpu)
    assert logged["train/accuracy"] == pytest.approx(truth["train/accuracy"])
    # A custom loop's rank-0 loss is reported (and fixed) only with report-rank0-loss = true.
    assert logged["train/loss"] == pytest.approx(rank0_slice["train/loss"])


def test_cpu_two_ranks_log_the_true_mean_only_after_the_fix(tmp_path):
    check_buggy_and_fixed(tmp_path, 2, CPU_DDP, cpu=True)


@pytest.mark.gpu
def test_gpu_ranks_log_the_true_mean_only_after_the_fix(tmp_path):
    count = gpu_count()
    if count < 2:
        pytest.skip(f"needs at least 2 CUDA GPUs to have more than one rank; {count} visible")
    check_buggy_and_fixed(tmp_path, count, ("--multi_gpu", "--num_processes", str(count)), cpu=False)



def _logged(script: Path, data: dict) -> dict:
    data_path = script.parent / "data.json"
    data_path.write_text(json.dumps(data))
    out = script.parent / "logged.json"
    run = accelerate_launch(script, CPU_DDP, script_args=("--data", str(data_path), "--out", str(out)))
    assert run.ok, run.output[-4000:]
    record = json.loads(out.read_text())
    assert record["num_processes"] == 2 and record["logged"], record
    return record["logged"][0]


def test_reduced_copy_left_unlogged_on_cpu_logs_rank0_loss_until_fixed(tmp_path):
    # scenario_reduced_copy.py: the loss is all-reduced for the console and the per-rank one is
    # logged; the unsafe fix logs the copy, which the code divided into the ranks' mean.
    data = make_data(2)
    truth = first_step_truth(data, range(len(data["x"])))["train/loss"]
    rank0 = first_step_truth(data, range(PER_DEVICE_BATCH_SIZE))["train/loss"]
    assert truth != pytest.approx(rank0)
    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "TRL004", tmp_path, unsafe=True, scenario="scenario_reduced_copy.py")
    assert '{"train/loss": reduced_loss.item()}' in fixed.read_text()

    assert _logged(buggy, data)["train/loss"] == pytest.approx(rank0)
    assert _logged(fixed, data)["train/loss"] == pytest.approx(truth)


def test_shard_evaluated_by_rank0_on_cpu_logs_its_shard_only(tmp_path):
    # scenario_shard_evaluated.py: the main process alone evaluates the loader a
    # DistributedSampler cuts by rank (rank 0 holds the even examples) and logs that as the run's
    # validation loss. The rule offers no fix (the evaluation must move to every rank and be
    # all-reduced): the launch shows that the number logged is rank 0's half of the set.
    data = make_data(2)
    whole = first_step_truth(data, range(len(data["x"])))["train/loss"]
    rank0_shard = first_step_truth(data, range(0, len(data["x"]), 2))["train/loss"]
    assert whole != pytest.approx(rank0_shard)
    scenario = tmp_path / "scenario.py"
    scenario.write_text((RULES / RULE_FOLDER / "scenario_shard_evaluated.py").read_text())
    linted = run_trllint("--no-cache", "--preview", "--select", "TRL004", "--format", "json", str(scenario))
    found = [f for f in json.loads(linted.stdout) if f["kind"].startswith("shard-evaluated-by-some-ranks")]
    assert len(found) == 1 and found[0]["fix"] is None, linted.stdout

    logged = _logged(scenario, data)
    assert logged["val/loss"] == pytest.approx(rank0_shard)
    assert logged["val/loss"] != pytest.approx(whole)
