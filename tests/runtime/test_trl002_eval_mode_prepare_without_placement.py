"""TRL002 at runtime: a reference model prepared with evaluation_mode=True under FSDP."""

from __future__ import annotations

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed

RULE = "trl002_eval_mode_prepare_without_placement"
CODE = "TRL002"
DEVICE_MISMATCH = "Expected all tensors to be on the same device"
STEPS = 2


def test_both_copies_train_on_cpu_ranks(tmp_path):
    """Both copies run end to end on two CPU ranks (DDP over gloo), without FSDP.

    This cannot show the bug: it needs FSDP on a GPU, where the reference model is left on the
    CPU while the policy is on ``cuda:0`` (see the ``gpu`` test below). What it proves is that the
    fixed script, with ``device_placement=True`` added, is still a working training script, and
    that the placement changes nothing where everything is on the CPU anyway.
    """
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    assert "device_placement=True" in fixed.read_text()
    for script in (buggy, fixed):
        launch = accelerate_launch(script, CPU_DDP)
        assert launch.ok, launch.output
        assert "distributed type: MULTI_CPU" in launch.output
        assert launch.output.count("reference model parameters on: cpu") == 2  # one line per rank
        assert launch.output.count(f"step {STEPS - 1}: loss") == 2
        assert DEVICE_MISMATCH not in launch.output


@pytest.mark.gpu
def test_fsdp_leaves_reference_model_on_cpu_until_fixed(tmp_path):
    """Under FSDP on one GPU the buggy copy's reference model stays on the CPU and its forward
    fails on the device mismatch; the ``trllint --fix`` copy places it on the GPU and trains."""
    fsdp = ("--use_fsdp", "--num_processes", "1")
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)

    broken = accelerate_launch(buggy, fsdp, cpu=False)
    assert not broken.ok, broken.output
    assert "distributed type: FSDP" in broken.output
    assert "reference model parameters on: cpu" in broken.output
    assert DEVICE_MISMATCH in broken.output

    repaired = accelerate_launch(fixed, fsdp, cpu=False)
    assert repaired.ok, repaired.output
    assert "distributed type: FSDP" in repaired.output
    assert "reference model parameters on: cuda" in repaired.output
    assert f"step {STEPS - 1}: loss" in repaired.output
    assert "scenario finished" in repaired.output
