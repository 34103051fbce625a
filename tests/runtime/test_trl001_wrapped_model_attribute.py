"""TRL001 at runtime: a Trainer step that reads ``model.config`` on the wrapped model.

The buggy scenario fails under DDP, silently trains with the wrong coefficient under DeepSpeed,
and fails under DataParallel; the copy ``trllint --fix`` wrote runs and uses the configured value.
On one GPU the Trainer wraps only under DeepSpeed; ``scenario_explicit_wrap.py`` wraps by hand
(DataParallel, or DDP in a one-rank group) to show the real AttributeError there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed, cuda_device_count, launch_env

RULE = "trl001_wrapped_model_attribute"
CODE = "TRL001"
CONFIGURED_COEF = 0.25  # scenario.AUX_LOSS_COEF
STEPS = 3  # scenario's max_steps
USED = re.compile(r"TRL001 rank=(\d+) wrapper=(\w+) aux_loss_coef=([0-9.]+)")


def coefficients_used(output: str) -> list[tuple[int, str, float]]:
    return [(int(rank), wrapper, float(value)) for rank, wrapper, value in USED.findall(output)]


def test_ddp_on_cpu_buggy_fails_fixed_runs(tmp_path):
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    assert "self.model_router_aux_loss_coef" in fixed.read_text()  # the cache-in-__init__ shape

    broken = accelerate_launch(buggy, CPU_DDP)
    assert not broken.ok
    assert "AttributeError: 'DistributedDataParallel' object has no attribute 'config'" in broken.output

    repaired = accelerate_launch(fixed, CPU_DDP)
    assert repaired.ok, repaired.output[-4000:]
    used = coefficients_used(repaired.output)
    assert {rank for rank, _, _ in used} == {0, 1}
    assert len(used) == 2 * STEPS
    assert all(wrapper == "DistributedDataParallel" and value == CONFIGURED_COEF for _, wrapper, value in used)


def _deepspeed_config(tmp_path):
    # No train_batch_size: DeepSpeed derives it from the micro batch and the real world size
    # (accelerate's --zero_stage shortcut lets the Trainer fill it for one process on the CPU).
    path = tmp_path / "ds_zero2.json"
    path.write_text(
        json.dumps(
            {
                "train_micro_batch_size_per_gpu": "auto",
                "gradient_accumulation_steps": "auto",
                "gradient_clipping": "auto",
                "zero_optimization": {"stage": 2},
            }
        )
    )
    return path


def check_deepspeed_reads_engine_config_until_fixed(tmp_path, ranks: int, env: dict[str, str]) -> None:
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    launch_args = ("--use_deepspeed", "--deepspeed_config_file", str(_deepspeed_config(tmp_path)), "--num_processes", str(ranks))

    silent = accelerate_launch(buggy, launch_args, cpu=False, env=env)
    assert silent.ok, silent.output[-4000:]  # no error at all: that is the bug
    used = coefficients_used(silent.output)
    assert len(used) == ranks * STEPS
    assert all(wrapper == "DeepSpeedEngine" for _, wrapper, _ in used)
    assert {value for _, _, value in used} == {0.0}  # the engine's config has no such key

    repaired = accelerate_launch(fixed, launch_args, cpu=False, env=env)
    assert repaired.ok, repaired.output[-4000:]
    used = coefficients_used(repaired.output)
    assert len(used) == ranks * STEPS
    assert all(wrapper == "DeepSpeedEngine" and value == CONFIGURED_COEF for _, wrapper, value in used)


def test_deepspeed_on_cpu_buggy_reads_engine_config_silently(tmp_path):
    # DeepSpeed's CPU accelerator, not accelerate's MULTI_CPU fallback: no ACCELERATE_USE_CPU.
    check_deepspeed_reads_engine_config_until_fixed(tmp_path, 2, {"CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.gpu
def test_deepspeed_on_one_gpu_buggy_reads_engine_config_silently(tmp_path):
    # One rank is enough: the Trainer hands the step the DeepSpeed engine whatever the world size.
    check_deepspeed_reads_engine_config_until_fixed(tmp_path, 1, {})


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("wrap", "wrapper"), [("dataparallel", "DataParallel"), ("ddp", "DistributedDataParallel")]
)
def test_explicit_wrap_on_one_gpu_buggy_fails_fixed_runs(tmp_path, wrap, wrapper):
    # A script that wraps by hand wraps on one GPU too: DataParallel(device_ids=[0]), or DDP in a
    # one-rank NCCL group. The fix reads through .module.
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path, scenario="scenario_explicit_wrap.py")
    assert 'getattr(model, "module", model).config' in fixed.read_text()
    one_process = ("--num_processes", "1")

    broken = accelerate_launch(buggy, one_process, script_args=("--wrap", wrap), cpu=False)
    assert not broken.ok
    assert f"AttributeError: '{wrapper}' object has no attribute 'config'" in broken.output, broken.output[-4000:]

    repaired = accelerate_launch(fixed, one_process, script_args=("--wrap", wrap), cpu=False)
    assert repaired.ok, repaired.output[-4000:]
    used = coefficients_used(repaired.output)
    assert used == [(0, wrapper, CONFIGURED_COEF)] * STEPS


@pytest.mark.gpu
def test_dataparallel_on_gpus_buggy_fails_fixed_runs(tmp_path):
    # Trainer wraps in DataParallel when one process sees several GPUs.
    if cuda_device_count() < 2:
        pytest.skip("DataParallel needs two or more visible GPUs")
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)

    def run(script):
        env = launch_env(cpu=False)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        return subprocess.run(
            [sys.executable, str(script)], cwd=script.parent, env=env, capture_output=True, text=True, timeout=600
        )

    broken = run(buggy)
    assert broken.returncode != 0
    assert "AttributeError: 'DataParallel' object has no attribute 'config'" in broken.stdout + broken.stderr

    repaired = run(fixed)
    assert repaired.returncode == 0, (repaired.stdout + repaired.stderr)[-4000:]
    used = coefficients_used(repaired.stdout)
    assert len(used) == STEPS
    assert all(wrapper == "DataParallel" and value == CONFIGURED_COEF for _, wrapper, value in used)


OWN_MEMBERS_READ = re.compile(r"TRL001 case=(\w+) rank=(\d+) step=(\d+) features=(\d+) labels=(\d+)")


@pytest.mark.parametrize(("case", "unwrapped"), [("prepared", "accelerator.unwrap_model(model)"), ("helper", "tagger.module")])
def test_own_members_through_ddp_on_cpu_buggy_fails_fixed_runs(tmp_path, case, unwrapped):
    # scenario_own_members.py: the model's own method and attribute, read through a DDP that
    # accelerator.prepare made (own-class-member-prepared) or a function of the script returned
    # (own-member-wrapped-by-helper). The method's fix is unsafe (it runs outside the wrapper's
    # forward), so --unsafe-fixes writes both.
    buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path, unsafe=True, scenario="scenario_own_members.py")
    assert f"{unwrapped}.encode(inputs)" in fixed.read_text()
    assert f"{unwrapped}.num_labels" in fixed.read_text()

    broken = accelerate_launch(buggy, CPU_DDP, script_args=("--case", case))
    assert not broken.ok
    assert "AttributeError: 'DistributedDataParallel' object has no attribute 'encode'" in broken.output, broken.output[-4000:]

    repaired = accelerate_launch(fixed, CPU_DDP, script_args=("--case", case))
    assert repaired.ok, repaired.output[-4000:]
    reads = OWN_MEMBERS_READ.findall(repaired.output)
    assert sorted((int(rank), int(step)) for _, rank, step, _, _ in reads) == [(r, s) for r in (0, 1) for s in range(2)]
    assert all(read_case == case and features == "16" and labels == "4" for read_case, _, _, features, labels in reads)


def test_own_members_through_a_project_modules_ddp_on_cpu_buggy_fails_fixed_runs(tmp_path):
    # scenario_wrapped_elsewhere.py: the wrap is made in the project's other module
    # (own-member-wrapped-elsewhere); the fixed reads go through model.module.
    buggy, fixed = buggy_and_fixed(
        RULE, CODE, tmp_path, scenario="scenario_wrapped_elsewhere.py", modules=("scenario_wrapped_elsewhere_dist.py",)
    )
    assert "model.module.backbone.parameters()" in fixed.read_text()
    assert "model.module.num_classes" in fixed.read_text()

    broken = accelerate_launch(buggy, CPU_DDP)
    assert not broken.ok
    assert "AttributeError: 'DistributedDataParallel' object has no attribute 'backbone'" in broken.output, broken.output[-4000:]

    repaired = accelerate_launch(fixed, CPU_DDP)
    assert repaired.ok, repaired.output[-4000:]
    reads = re.findall(r"TRL001 rank=(\d+) step=(\d+) classes=(\d+)", repaired.output)
    assert sorted((int(rank), int(step)) for rank, step, _ in reads) == [(r, s) for r in (0, 1) for s in range(2)]
    assert all(classes == "3" for _, _, classes in reads)
