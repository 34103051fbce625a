"""TRL009 at runtime: generated ids of a different length on each rank, gathered as is, abort
gloo on the size mismatch; the ``trllint --fix --unsafe-fixes`` copy pads them across processes
first and rank 0 gets every prompt's tokens.

The scenario's loader left-pads each batch to its longest prompt, so ``generate`` (a tiny GPT-2
with random weights, four new tokens, no end-of-sequence token) returns ``[2, 7]`` on rank 0 and
``[2, 10]`` on rank 1 in the first step. After the fix, rank 0 prints the count of tokens that are
not padding in each gathered row: the prompt's length plus four, in the prompts' order.
"""

from __future__ import annotations

import re

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed

RULE_FOLDER = "trl009_gather_without_padding"
# As in scenario.py: the prompts' lengths, and the tokens generate adds to each.
PROMPT_LENGTHS = [3, 2, 6, 4, 2, 1, 5, 3]
NEW_TOKENS = 4
LAUNCH_TIMEOUT_S = 240


def test_cpu_gather_of_generated_ids_aborts_until_the_fix(tmp_path):
    pytest.importorskip("transformers")
    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "TRL009", tmp_path, unsafe=True)
    assert (
        "accelerator.gather_for_metrics(accelerator.pad_across_processes(generated_tokens, dim=1, pad_index=PAD_TOKEN_ID))"
        in fixed.read_text()
    )

    run = accelerate_launch(buggy, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert not run.ok, "the buggy scenario finished: the ranks' lengths matched"
    # Gloo's check of the received size against the buffer the other rank's shape made.
    assert "Received data size doesn't match expected size" in run.output, run.output[-4000:]
    assert "TRL009 tokens per prompt" not in run.output

    run = accelerate_launch(fixed, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert run.ok, run.output[-4000:]
    counts = re.search(r"TRL009 tokens per prompt: \[([\d, ]+)\]", run.output)
    assert counts, run.output[-4000:]
    assert [int(c) for c in counts.group(1).split(",")] == [n + NEW_TOKENS for n in PROMPT_LENGTHS]
