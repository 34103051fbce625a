"""Launching a rule's scenario under ``accelerate launch``, as written and as trllint fixed it.

The fixed script is always the linter's own output (``trllint --fix`` on a copy), never a second
hand-written file: the runtime test proves the codemod, not a human's idea of it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "rules"

# Two ranks over gloo on the CPU: DistributedDataParallel, the wrap that breaks model.config.
CPU_DDP = ("--multi_gpu", "--num_processes", "2")


@dataclass
class Launch:
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def scenario_path(rule_folder: str, name: str = "scenario.py") -> Path:
    return RULES / rule_folder / name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_env(*, cpu: bool = True, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "WANDB_MODE": "disabled",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
            # A rank that aborts in C++ prints where its Python was (see TEARDOWN_ABORT).
            "PYTHONFAULTHANDLER": "1",
        }
    )
    if cpu:
        env["ACCELERATE_USE_CPU"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.update(extra or {})
    return env


def accelerate_launch(
    script: Path,
    launch_args: tuple[str, ...] = CPU_DDP,
    *,
    script_args: tuple[str, ...] = (),
    cpu: bool = True,
    env: dict[str, str] | None = None,
    timeout: int = 900,
) -> Launch:
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(free_port()),
        *launch_args,
        str(script),
        *script_args,
    ]
    launch = _run_launch(command, script, env=launch_env(cpu=cpu, extra=env), timeout=timeout)
    aborted: list[str] = []
    while not launch.ok and TEARDOWN_ABORT in launch.output and len(aborted) < TEARDOWN_RETRIES:
        # Gloo's C++ threads can abort a rank while the process exits (pytorch/pytorch#190489),
        # after the scenario's work is done: seen about once in a few hundred CPU launches, and
        # twice running once under DeepSpeed's CPU accelerator. Such a run says nothing about the
        # script, so it is run again; a script that really aborts this way aborts every time,
        # and the test fails on the last run's output.
        aborted.append(launch.output)
        launch = _run_launch(command, script, env=launch_env(cpu=cpu, extra=env), timeout=timeout)
    if aborted:
        notes = "".join(f"[launch {n} aborted at teardown; launched again]\n{output[-2000:]}\n" for n, output in enumerate(aborted, 1))
        launch.output = f"{notes}[launch {len(aborted) + 1}]\n{launch.output}"
    return launch


def torchrun_launch(script: Path, ranks: int, *, script_args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Launch:
    """``torchrun`` on the GPUs: Accelerator() then runs NCCL in a group of any size, one rank
    included (``accelerate launch --multi_gpu`` asks for two processes at least)."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(ranks), "--master_port", str(free_port()), str(script), *script_args]
    return _run_launch(command, script, env=launch_env(cpu=False, extra=env), timeout=900)


# What libstdc++ prints when a joinable std::thread is destroyed: a process-teardown abort.
TEARDOWN_ABORT = "terminate called without an active exception"
TEARDOWN_RETRIES = 3


def _run_launch(command: list[str], script: Path, *, env: dict[str, str], timeout: int) -> Launch:
    completed = subprocess.run(command, cwd=script.parent, env=env, capture_output=True, text=True, timeout=timeout)
    launch = Launch(completed.returncode, completed.stdout + completed.stderr)
    record_launch(command, script, launch)
    return launch


def record_launch(command: list[str], script: Path, launch: Launch) -> None:
    """Append the launch and its whole output to $TRLLINT_RUNTIME_LOG, when set.

    The GPU suite (tests/runtime/gpu_suite.sh) sets it, so that docs/gpu-runs.md can quote the
    real error of each buggy copy and the good run of each fixed copy, not just PASSED.
    """
    log = os.environ.get("TRLLINT_RUNTIME_LOG")
    if not log:
        return
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"\n===== {script.parent.name}/{script.name}: exit {launch.returncode}\n")
        handle.write("$ " + " ".join(command[2:]) + "\n")
        handle.write(launch.output)


def run_trllint(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trllint", *args],
        cwd=cwd or REPO,
        env=launch_env(cpu=True),
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
    )


def buggy_and_fixed(
    rule_folder: str,
    code: str,
    tmp_path: Path,
    *,
    unsafe: bool = False,
    scenario: str = "scenario.py",
    modules: tuple[str, ...] = (),
) -> tuple[Path, Path]:
    """Copies of a scenario: ``buggy/`` as written, ``fixed/`` after ``trllint --fix``;
    ``modules``: the scenario's own modules in the rule folder, copied beside it under their names."""
    source = scenario_path(rule_folder, scenario)
    buggy = tmp_path / "buggy" / "scenario.py"
    fixed = tmp_path / "fixed" / "scenario.py"
    for target in (buggy, fixed):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        for module in modules:
            shutil.copy(scenario_path(rule_folder, module), target.parent / module)
    # --preview: a preview rule (TRL006) is selected only with it, and a stable rule's preview
    # findings are then fixed and proven too.
    selection = ("--no-cache", "--preview", "--select", code)
    check = run_trllint(*selection, str(buggy))
    assert check.returncode == 1 and code in check.stdout, f"trllint does not flag the scenario:\n{check.stdout}{check.stderr}"
    fix_args = [*selection, "--fix", str(fixed)] + (["--unsafe-fixes"] if unsafe else [])
    result = run_trllint(*fix_args)
    assert fixed.read_text() != buggy.read_text(), f"trllint --fix changed nothing:\n{result.stdout}{result.stderr}"
    recheck = run_trllint(*selection, str(fixed))
    assert recheck.returncode == 0, f"findings remain after --fix:\n{recheck.stdout}"
    return buggy, fixed


def cuda_device_count() -> int:
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        return int(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0
