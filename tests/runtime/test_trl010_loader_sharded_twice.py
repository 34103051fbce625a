"""TRL010 at runtime: the loader with a DistributedSampler, prepared by accelerate, trains two
ranks on half of the set (each rank a quarter); the ``trllint --fix --unsafe-fixes`` copy trains
them on all of it, each example once.

The scenario gathers the indexes of the examples every rank trained on; rank 0 prints how many
steps each rank took and how many distinct examples the job saw (sixteen in the set).
"""

from __future__ import annotations

import re

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed

RULE_FOLDER = "trl010_loader_sharded_twice"
EXAMPLES = 16
LAUNCH_TIMEOUT_S = 240


def seen(output: str) -> tuple[list[int], int]:
    steps = re.search(r"TRL010 steps per rank: \[([\d, ]+)\]", output)
    distinct = re.search(rf"TRL010 distinct examples seen: (\d+) of {EXAMPLES}", output)
    assert steps and distinct, output[-4000:]
    return [int(s) for s in steps.group(1).split(",")], int(distinct.group(1))


def test_cpu_ranks_see_half_the_set_until_the_fix(tmp_path):
    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "TRL010", tmp_path, unsafe=True)
    fixed_text = fixed.read_text()
    assert "DistributedSampler(dataset" not in fixed_text and "shuffle=True," in fixed_text

    run = accelerate_launch(buggy, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert run.ok, run.output[-4000:]  # no error: the data is lost silently
    # Two ranks, two examples a step: the sampler leaves each rank 8 examples, prepare 4 of them.
    assert seen(run.output) == ([2, 2], EXAMPLES // 2)

    run = accelerate_launch(fixed, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert run.ok, run.output[-4000:]
    assert seen(run.output) == ([4, 4], EXAMPLES)
    assert f"TRL010 examples: {list(range(EXAMPLES))}" in run.output
