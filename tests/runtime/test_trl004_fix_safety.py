"""TRL004's fixes on two CPU ranks (gloo), one small scenario per class of fix safety.

Each scenario (``rules/trl004_ungathered_metric/scenarios/``) logs one step from a batch the test
writes per rank. Where a safe fix exists, ``trllint --fix`` rewrites a copy, the copy runs to the
end under ``accelerate launch`` and logs the value the test computes itself. Where none exists,
``--fix`` leaves the file alone and ``--unsafe-fixes`` says why. The already-reducing ``log()``
needs no fix: trllint reports nothing, the run logs the true value, and the same code without its
reduction is reported.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tests.runtime.launch import CPU_DDP, RULES, accelerate_launch, run_trllint, torchrun_launch

SCENARIOS = RULES / "trl004_ungathered_metric" / "scenarios"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


@dataclass(frozen=True)
class FixClass:
    scenario: str
    data: dict[str, dict[str, list]]  # rank -> batch
    key: str  # the logged metric
    truth: Callable[[dict], float]  # computed from the data, without torch
    safe_fix: bool = True


ACCURACY_DATA = {
    "0": {"predictions": [1, 0, 1, 1], "labels": [1, 0, 1, 1]},  # all right
    "1": {"predictions": [1, 1, 0, 0], "labels": [1, 0, 1, 0]},  # half right
}
MASKED_DATA = {
    "0": {"rewards": [1.0, 2.0, 9.0, 9.0], "valid": [True, True, False, False]},
    "1": {"rewards": [4.0, 5.0, 6.0, 9.0], "valid": [True, True, True, False]},
}


def _accuracy_truth(data: dict) -> float:
    hits = [p == y for batch in data.values() for p, y in zip(batch["predictions"], batch["labels"])]
    return sum(hits) / len(hits)


def _masked_rank_means(data: dict) -> float:
    # The mean of the ranks' means (the README says why this differs from the mean of all elements).
    return _mean([_mean([r for r, v in zip(b["rewards"], b["valid"]) if v]) for b in data.values()])


CLASSES = [
    FixClass(
        "int_tensor",
        {"0": {"position_ids": [0, 1, 2]}, "1": {"position_ids": [0, 1, 2, 3, 4]}},
        "sequence_length",
        lambda data: _mean([max(b["position_ids"]) + 1 for b in data.values()]),
    ),
    FixClass("already_item", ACCURACY_DATA, "accuracy", _accuracy_truth),
    FixClass("per_rank_shape", MASKED_DATA, "valid_reward", _masked_rank_means),
    FixClass(
        "per_rank_condition",
        {"0": MASKED_DATA["0"], "1": {"rewards": [4.0], "valid": [False]}},
        "valid_reward",
        lambda data: 0.0,
        safe_fix=False,
    ),
    FixClass("reducing_log", ACCURACY_DATA, "accuracy", _accuracy_truth),
]


def _logged(script: Path, data: dict) -> dict:
    data_path, out = script.parent / "data.json", script.parent / "logged.json"
    data_path.write_text(json.dumps(data))
    run = accelerate_launch(script, CPU_DDP, script_args=("--data", str(data_path), "--out", str(out)))
    assert run.ok, run.output[-4000:]
    record = json.loads(out.read_text())
    assert record["num_processes"] == 2
    return record["logged"]


@pytest.mark.parametrize("fix_class", CLASSES, ids=lambda c: c.scenario)
def test_trl004_fix_on_two_ranks(tmp_path: Path, fix_class: FixClass) -> None:
    script = tmp_path / f"{fix_class.scenario}.py"
    shutil.copy(SCENARIOS / f"{fix_class.scenario}.py", script)
    written = script.read_text()
    fix = run_trllint("--no-cache", "--preview", "--select", "TRL004", "--fix", str(script))

    if fix_class.scenario == "reducing_log":
        assert fix.returncode == 0 and script.read_text() == written, fix.stdout
        assert _logged(script, fix_class.data)[fix_class.key] == pytest.approx(fix_class.truth(fix_class.data))
        unreduced = tmp_path / "unreduced.py"
        unreduced.write_text(written.replace('self.accelerator.reduce(local_mean, "mean")', "local_mean"))
        assert "TRL004" in run_trllint("--no-cache", "--preview", "--select", "TRL004", str(unreduced)).stdout
        return

    if not fix_class.safe_fix:
        assert script.read_text() == written, "--fix applied a fix that is not safe"
        unsafe = run_trllint("--no-cache", "--preview", "--select", "TRL004", "--unsafe-fixes", str(script))
        assert "[unsafe fix: the gather may hang: it runs only on ranks where `valid.any()` holds]" in unsafe.stdout
        return

    fixed = script.read_text()
    assert fixed != written, fix.stdout + fix.stderr
    assert run_trllint("--no-cache", "--preview", "--select", "TRL004", str(script)).returncode == 0
    assert _logged(script, fix_class.data)[fix_class.key] == pytest.approx(fix_class.truth(fix_class.data))


# ---- a CPU tensor handed to a gather ------------------------------------------------

# What trllint wrote before the fix knew the value's device: the CPU copy, gathered.
GATHERED_ON_THE_CPU = "accelerator.gather(correct.cpu().mean()).mean()"


def _cpu_tensor_run(script: Path, *, cpu: bool = True, ranks: int = 2) -> tuple[bool, str, dict | None]:
    data_path, out = script.parent / "data.json", script.parent / "logged.json"
    data_path.write_text(json.dumps({rank: ACCURACY_DATA[rank] for rank in map(str, range(ranks))}))
    args = ("--data", str(data_path), "--out", str(out))
    track = {"TRLLINT_TRACK_CPU_MOVES": "1"}
    if cpu:
        run = accelerate_launch(script, ("--multi_gpu", "--num_processes", str(ranks)), script_args=args, env=track)
    else:
        run = torchrun_launch(script, ranks, script_args=args, env=track)
    return run.ok, run.output, json.loads(out.read_text()) if run.ok else None


def _fixed_cpu_tensor(tmp_path: Path) -> tuple[Path, Path]:
    """trllint's fix of the scenario, and the CPU-side gather it used to write."""
    fixed = tmp_path / "fixed" / "cpu_tensor.py"
    fixed.parent.mkdir()
    shutil.copy(SCENARIOS / "cpu_tensor.py", fixed)
    assert run_trllint("--no-cache", "--preview", "--select", "TRL004", "--fix", str(fixed)).returncode == 0
    assert "accelerator.gather(correct.mean()).mean().cpu()" in fixed.read_text()
    naive = tmp_path / "naive" / "cpu_tensor.py"
    naive.parent.mkdir()
    naive.write_text(fixed.read_text().replace("accelerator.gather(correct.mean()).mean().cpu()", GATHERED_ON_THE_CPU))
    return fixed, naive


def test_cpu_tensor_fix_gathers_on_the_device_then_moves_to_the_cpu(tmp_path: Path) -> None:
    # On two CPU ranks every tensor is on the CPU; the harness tells whether the gathered value
    # went through .cpu() (launch_step.track_cpu_moves), which NCCL would refuse.
    fixed, naive = _fixed_cpu_tensor(tmp_path)
    ok, output, record = _cpu_tensor_run(fixed)
    assert ok and record is not None, output[-4000:]
    assert record["gathered_from_cpu"] == [False]
    assert record["logged"]["accuracy"] == pytest.approx(_accuracy_truth(ACCURACY_DATA))
    # The check can fail: the CPU-side gather trllint used to write is caught by it.
    ok, output, record = _cpu_tensor_run(naive)
    assert ok and record is not None, output[-4000:]
    assert record["gathered_from_cpu"] == [True]


@pytest.mark.gpu
def test_cpu_tensor_gathered_on_the_cpu_fails_under_nccl_and_the_fix_runs(tmp_path: Path) -> None:
    # NCCL refuses a CPU tensor in a group of any size, so one GPU (a one-rank NCCL group under
    # torchrun) shows it; two GPUs gather between real ranks.
    from tests.runtime.launch import cuda_device_count

    ranks = min(2, cuda_device_count())
    fixed, naive = _fixed_cpu_tensor(tmp_path)
    ok, output, _ = _cpu_tensor_run(naive, cpu=False, ranks=ranks)
    assert not ok, "NCCL gathered a CPU tensor"
    assert "ValueError: Tensors must be CUDA and dense" in output, output[-4000:]  # NCCL's check
    ok, output, record = _cpu_tensor_run(fixed, cpu=False, ranks=ranks)
    assert ok and record is not None, output[-4000:]
    assert record["num_processes"] == ranks
    assert record["gathered_from_cpu"] == [False]
    truth = _accuracy_truth({rank: ACCURACY_DATA[rank] for rank in map(str, range(ranks))})
    assert record["logged"]["accuracy"] == pytest.approx(truth)
