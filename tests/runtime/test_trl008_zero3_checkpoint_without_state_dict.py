"""TRL008 at runtime: under DeepSpeed ZeRO-3 the scenario's ``save_pretrained`` writes the
parameters' placeholders, a checkpoint ``from_pretrained`` refuses; the ``trllint --fix`` copy
passes the gathered state dict and its checkpoint reloads to the trained model.

The scenario trains a small GPT-2 on two CPU ranks (DeepSpeed's CPU accelerator over gloo) and
prints the trained model's loss on a probe batch; the test reloads each checkpoint with
transformers and compares.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.runtime.launch import accelerate_launch, buggy_and_fixed

RULE = "trl008_zero3_checkpoint_without_state_dict"
CODE = "TRL008"
LAUNCH_TIMEOUT_S = 300
# As in scenario.py: the probe is the first two rows of the training tokens.
VOCAB, ROWS, LENGTH, DATA_SEED = 1000, 8, 16, 1


def zero3(ranks: int) -> tuple[str, ...]:
    return ("--use_deepspeed", "--zero_stage", "3", "--num_processes", str(ranks))


def trained_probe_loss(output: str) -> float:
    match = re.search(r"TRL008 trained model: probe loss ([0-9.]+)", output)
    assert match, output[-4000:]
    return float(match.group(1))


def reload(folder: Path):
    transformers = pytest.importorskip("transformers")
    return transformers.GPT2LMHeadModel.from_pretrained(folder)


def probe_loss(model) -> float:
    torch = pytest.importorskip("torch")
    tokens = torch.randint(0, VOCAB, (ROWS, LENGTH), generator=torch.Generator().manual_seed(DATA_SEED))
    probe = tokens[:2]
    with torch.no_grad():
        return model(input_ids=probe, labels=probe).loss.item()


def check_checkpoint_until_fixed(tmp_path: Path, ranks: int, env: dict[str, str]) -> None:
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    assert "state_dict=accelerator.get_state_dict(model)" in fixed.read_text()

    written = accelerate_launch(buggy, zero3(ranks), script_args=("--out", "saved"), cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert written.ok, written.output[-4000:]  # no error at all when it saves: that is the bug
    placeholders = buggy.parent / "saved" / "model.safetensors"
    repaired = accelerate_launch(fixed, zero3(ranks), script_args=("--out", "saved"), cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert repaired.ok, repaired.output[-4000:]
    whole = fixed.parent / "saved" / "model.safetensors"
    # The partitioned matrices were written as empty tensors: a tenth of the weights' size.
    assert placeholders.stat().st_size * 5 < whole.stat().st_size, (placeholders.stat().st_size, whole.stat().st_size)

    with pytest.raises(RuntimeError, match="ignore_mismatched_sizes") as refused:
        reload(buggy.parent / "saved")
    del refused
    assert probe_loss(reload(fixed.parent / "saved")) == pytest.approx(trained_probe_loss(repaired.output), rel=1e-4)


def test_zero3_on_two_cpu_ranks_writes_placeholders_until_fixed(tmp_path):
    # No ACCELERATE_USE_CPU: with it accelerate silently drops DeepSpeed. Without CUDA, DeepSpeed
    # picks its CPU accelerator and the scenario asks for gloo.
    check_checkpoint_until_fixed(tmp_path, 2, {"CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.gpu
def test_zero3_on_one_gpu_writes_placeholders_until_fixed(tmp_path):
    # One rank is enough: ZeRO-3 swaps each partitioned parameter for a placeholder whatever the world size.
    check_checkpoint_until_fixed(tmp_path, 1, {})
