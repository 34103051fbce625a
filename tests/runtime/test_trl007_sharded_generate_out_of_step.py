"""TRL007 at runtime: under DeepSpeed ZeRO-3 rank 0's ``generate`` waits in a parameter gather the
other rank never joins, until gloo's timeout raises; the ``trllint --fix`` copy generates on every
rank and finishes, rank 0 printing the sample.

The scenario fine-tunes a small GPT-2 on two CPU ranks (DeepSpeed's CPU accelerator over gloo,
a 15-second process-group timeout) and generates a sample under ``if accelerator.is_main_process:``.
"""

from __future__ import annotations

import re

import pytest

from tests.runtime.launch import accelerate_launch, buggy_and_fixed

RULE = "trl007_sharded_generate_out_of_step"
CODE = "TRL007"
GROUP_TIMEOUT_S = 15
LAUNCH_TIMEOUT_S = 300
SAMPLE = re.compile(r"TRL007 sample \[(\d+(?:, \d+)*)\]")


def zero3(ranks: int) -> tuple[str, ...]:
    return ("--use_deepspeed", "--zero_stage", "3", "--num_processes", str(ranks))


def check_rank_zero_hangs_in_generate_until_fixed(tmp_path, ranks: int, env: dict[str, str]) -> None:
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    fixed_text = fixed.read_text()
    # The generate now runs on every rank, before the rank test; the printing stays under it.
    assert fixed_text.index("sample = unwrapped.generate(") < fixed_text.index("\n    if accelerator.is_main_process:")
    args = ("--timeout", str(GROUP_TIMEOUT_S))

    hung = accelerate_launch(buggy, zero3(ranks), script_args=args, cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert not hung.ok, "the buggy scenario finished: rank 0's generate was met"
    # Rank 0 waits in ZeRO-3's parameter all-gather inside generate, rank 1 in the barrier.
    assert re.search(r"Timed out waiting \d+ms for (recv|send) operation to complete", hung.output), hung.output[-4000:]
    assert "in generate" in hung.output and "fetch_sub_module" in hung.output, hung.output[-4000:]
    assert "TRL007 sample" not in hung.output

    repaired = accelerate_launch(fixed, zero3(ranks), script_args=args, cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert repaired.ok, repaired.output[-4000:]
    samples = SAMPLE.findall(repaired.output)
    assert len(samples) == 1, repaired.output[-4000:]  # printed by rank 0 only
    assert len(samples[0].split(", ")) == 4 + 8  # the prompt and eight new tokens
    for rank in range(ranks):
        assert f"TRL007 rank={rank} done" in repaired.output


def test_zero3_on_two_cpu_ranks_rank_zero_generate_hangs_until_fixed(tmp_path):
    # No ACCELERATE_USE_CPU: with it accelerate silently drops DeepSpeed. Without CUDA, DeepSpeed
    # picks its CPU accelerator and the scenario asks for gloo.
    check_rank_zero_hangs_in_generate_until_fixed(tmp_path, 2, {"CUDA_VISIBLE_DEVICES": ""})


def test_zero3_on_two_cpu_ranks_unsynced_generate_hangs_until_fixed(tmp_path):
    # synced_gpus=False on every rank: the prompts differ in length, rank 1 finishes first and
    # leaves rank 0 waiting in the next parameter gather. The fix (synced_gpus=True) is unsafe:
    # nothing shows the code runs only under ZeRO-3 or FSDP.
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path, unsafe=True, scenario="scenario_unsynced.py")
    assert "synced_gpus=True" in fixed.read_text()
    env = {"CUDA_VISIBLE_DEVICES": ""}
    args = ("--timeout", str(GROUP_TIMEOUT_S))

    hung = accelerate_launch(buggy, zero3(2), script_args=args, cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert not hung.ok, "the buggy scenario finished: the ranks stayed in step"
    assert "TRL007 rank=1 completion" in hung.output  # rank 1 finished its shorter generation
    assert "TRL007 rank=0 completion" not in hung.output  # rank 0 never did
    assert re.search(r"Timed out waiting \d+ms for (recv|send) operation to complete", hung.output), hung.output[-4000:]

    repaired = accelerate_launch(fixed, zero3(2), script_args=args, cpu=False, env=env, timeout=LAUNCH_TIMEOUT_S)
    assert repaired.ok, repaired.output[-4000:]
    completions = dict(re.findall(r"TRL007 rank=(\d) completion \[([\d, ]+)\]", repaired.output))
    assert sorted(completions) == ["0", "1"], repaired.output[-4000:]
    assert all(len(tokens.split(", ")) == 12 for tokens in completions.values())  # both reached max_length


@pytest.mark.gpu
def test_zero3_on_two_gpus_rank_zero_generate_hangs_until_fixed(tmp_path):
    # NCCL needs one GPU per rank: two ranks, two GPUs (skips on a one-GPU machine).
    from tests.runtime.conftest import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs two CUDA GPUs: the hang needs a second rank, and NCCL a GPU per rank")
    check_rank_zero_hangs_in_generate_until_fixed(tmp_path, 2, {})
