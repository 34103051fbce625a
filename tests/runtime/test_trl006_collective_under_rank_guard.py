"""TRL006 at runtime: the buggy scenario hangs in a collective only rank 0 entered, until gloo's
timeout raises; the trllint-fixed copy finishes and rank 0 saves the right state.

The scenario trains a one-feature regression on two CPU ranks (four examples each) and, under
``if accelerator.is_main_process:``, totals the examples with ``accelerator.reduce`` and saves the
model. The test computes the weights that two steps of SGD over the whole set give (DDP averages
the two ranks' gradients: the mean over each step's four examples) without torch, and compares.
``scenario_full_tensor.py`` shards a model with FSDP2 and assembles its DTensors on rank 0 alone
(a hang) or on every rank (the model one process would have).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed, run_trllint, scenario_path

RULE_FOLDER = "trl006_collective_under_rank_guard"
# As in scenario.py: the data, two examples per rank per step, SGD from zero.
FEATURES = [0.5, -1.0, 1.5, 2.0, -0.5, 1.0, 0.0, -2.0]
GLOBAL_BATCH = 4
LEARNING_RATE = 0.1
GROUP_TIMEOUT_S = 10  # the scenario's process-group timeout: gloo raises after it
LAUNCH_TIMEOUT_S = 240  # and the test gives up on the launch after this


def expected_weights() -> tuple[float, float]:
    """``Linear(1, 1)`` from zero, MSE against ``2x + 1``, one SGD step per four examples."""
    weight = bias = 0.0
    for start in range(0, len(FEATURES), GLOBAL_BATCH):
        batch = FEATURES[start : start + GLOBAL_BATCH]
        errors = [weight * x + bias - (2 * x + 1) for x in batch]
        grad_weight = sum(2 * e * x for e, x in zip(errors, batch)) / len(batch)
        grad_bias = sum(2 * e for e in errors) / len(batch)
        weight, bias = weight - LEARNING_RATE * grad_weight, bias - LEARNING_RATE * grad_bias
    return weight, bias


def launch(script: Path) -> tuple[bool, str, Path]:
    out = script.parent / "saved.pt"
    run = accelerate_launch(
        script, CPU_DDP, script_args=("--out", str(out), "--timeout", str(GROUP_TIMEOUT_S)), timeout=LAUNCH_TIMEOUT_S
    )
    return run.ok, run.output, out


def test_cpu_rank_zero_hangs_in_reduce_until_the_fix(tmp_path):
    torch = pytest.importorskip("torch")
    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "TRL006", tmp_path)
    fixed_text = fixed.read_text()
    # Both collectives now run on every rank, before the rank test.
    hoisted = fixed_text.index('total_seen = accelerator.reduce(examples_seen, reduction="sum")')
    assert hoisted < fixed_text.index("state = accelerator.get_state_dict(model)") < fixed_text.index(
        "\n    if accelerator.is_main_process:"
    )

    ok, output, out = launch(buggy)
    assert not ok, "the buggy scenario finished: rank 0's reduce was met"
    # Rank 0 waits in all_reduce for rank 1, which waits in the barrier: gloo's timeout fires.
    assert re.search(r"Timed out waiting \d+ms for (recv|send) operation to complete", output), output[-4000:]
    assert "in all_reduce" in output or "_reduce_across_processes" in output, output[-4000:]
    assert not out.exists()

    ok, output, out = launch(fixed)
    assert ok, output[-4000:]
    saved = torch.load(out)
    assert saved["examples_seen"] == len(FEATURES)  # every rank's examples, not rank 0's four
    weight, bias = expected_weights()
    assert saved["state"]["weight"].item() == pytest.approx(weight, rel=1e-5)
    assert saved["state"]["bias"].item() == pytest.approx(bias, rel=1e-5)


def test_a_hoist_that_changes_the_barrier_count_is_unsafe_and_still_hangs(tmp_path):
    # the hoist of the second of rank 0's two barriers used to be labelled safe. It is
    # unsafe now: --fix leaves the file, and what --unsafe-fixes writes still hangs (rank 0 enters
    # two barriers, the others one), which is why.
    source = scenario_path(RULE_FOLDER, "scenario_hoist_count.py")
    written = tmp_path / "written" / "scenario.py"
    hoisted = tmp_path / "hoisted" / "scenario.py"
    for target in (written, hoisted):
        target.parent.mkdir()
        target.write_text(source.read_text())
    run_trllint("--no-cache", "--preview", "--select", "TRL006", "--fix", str(written))
    assert written.read_text() == source.read_text(), "--fix applied a hoist that changes the barrier count"
    report = run_trllint("--no-cache", "--preview", "--select", "TRL006", "--unsafe-fixes", str(hoisted))
    assert "after the hoist some ranks may enter it once more than the others" in report.stdout, report.stdout
    run_trllint("--no-cache", "--preview", "--select", "TRL006", "--fix", "--unsafe-fixes", str(hoisted))
    assert hoisted.read_text() != source.read_text()
    for script in (written, hoisted):
        ok, output, _ = launch(script)
        assert not ok, f"{script.parent.name}: the ranks' barrier counts were matched"
        assert "TRL006 rank=1 done" not in output or "TRL006 rank=0 done" not in output, output[-3000:]


def test_cpu_fsdp2_full_tensor_on_rank_zero_hangs_and_every_rank_assembling_works(tmp_path):
    # FSDP2's parameters are DTensors: full_tensor() all-gathers the shards from every rank.
    torch = pytest.importorskip("torch")
    if not hasattr(pytest.importorskip("torch.distributed.fsdp"), "fully_shard"):
        pytest.skip("FSDP2 (fully_shard) needs torch 2.6 or later")
    script = tmp_path / "scenario_full_tensor.py"
    script.write_text(scenario_path(RULE_FOLDER, "scenario_full_tensor.py").read_text())
    report = run_trllint("--no-cache", "--preview", "--select", "TRL006", "--format", "json", str(script))
    lines = script.read_text().splitlines()
    # The rank-0 assembly is flagged, as a collective under every backend, with its rank guard as
    # evidence; the every-rank one is not.
    flagged = [(lines[f["line"] - 1].strip(), f["kind"], f["evidence"][0]["message"]) for f in json.loads(report.stdout)]
    assert flagged == [
        (
            "state = {name: tensor.full_tensor() for name, tensor in model.state_dict().items()}",
            "collective",
            "the rank guard: under `if dist.get_rank() == 0:`",
        )
    ]

    def run(*extra: str) -> tuple[bool, str, Path]:
        out = tmp_path / f"saved{'-'.join(extra)}.pt"
        args = ("--out", str(out), "--timeout", str(GROUP_TIMEOUT_S), *extra)
        launched = accelerate_launch(script, CPU_DDP, script_args=args, timeout=LAUNCH_TIMEOUT_S)
        return launched.ok, launched.output, out

    ok, output, out = run("--on-rank-zero")
    assert not ok, "rank 0 assembled the parameters alone: its all-gather was met"
    assert re.search(r"Timed out waiting \d+ms for (recv|send) operation to complete", output), output[-4000:]
    assert not out.exists()

    ok, output, out = run()
    assert ok, output[-4000:]
    # The two ranks' shards make the model one process would have after the same step.
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    reference(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    saved = torch.load(out)
    assert saved.keys() == reference.state_dict().keys()
    for name, tensor in reference.state_dict().items():
        assert torch.allclose(saved[name], tensor, atol=1e-6), name
