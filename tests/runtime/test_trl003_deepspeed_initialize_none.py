"""TRL003 at runtime: a None reference model handed to deepspeed.initialize under ZeRO-2.

The scenario is an Online-DPO-like trainer whose reference model is None (a PEFT adapter
doubles as the reference). As written, its ``prepare_deepspeed`` helper hands None to
``deepspeed.initialize``; the ``trllint --fix`` copy guards the call and trains.
"""

from __future__ import annotations

import pytest

from tests.runtime.launch import accelerate_launch, buggy_and_fixed, cuda_device_count

RULE = "trl003_deepspeed_initialize_none"

def zero2(ranks: int) -> tuple[str, ...]:
    return ("--use_deepspeed", "--zero_stage", "2", "--num_processes", str(ranks))

DEEPSPEED_ERROR = "AssertionError: deepspeed.initialize requires a model"


def _check(tmp_path, ranks, env):
    buggy, fixed = buggy_and_fixed(RULE, "TRL003", tmp_path)
    assert "if self.ref_model is not None:" in fixed.read_text()

    broken = accelerate_launch(buggy, zero2(ranks), cpu=False, env=env)
    assert not broken.ok, broken.output[-4000:]
    assert DEEPSPEED_ERROR in broken.output, broken.output[-4000:]

    repaired = accelerate_launch(fixed, zero2(ranks), cpu=False, env=env)
    assert repaired.ok, repaired.output[-4000:]
    assert f"TRAINED 3 steps on {ranks} ranks with DeepSpeedEngine ZeRO-2" in repaired.output, repaired.output[-4000:]
    assert DEEPSPEED_ERROR not in repaired.output


def test_deepspeed_zero2_on_two_cpu_ranks(tmp_path):
    # No ACCELERATE_USE_CPU: with it accelerate silently drops DeepSpeed. Without CUDA, DeepSpeed
    # picks its CPU accelerator and talks over gloo.
    _check(tmp_path, 2, {"CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.gpu
def test_deepspeed_zero2_on_gpu(tmp_path):
    # NCCL refuses two ranks on one GPU: as many ranks as GPUs, at most two.
    _check(tmp_path, min(2, cuda_device_count()), {})
