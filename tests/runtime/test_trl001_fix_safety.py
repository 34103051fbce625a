"""TRL001's fixes that stand on a fact the code does not prove, on two CPU ranks.

``scenario_fix_safety.py``: an optional accelerator (the fix naming it breaks the run that has
none) and a neighbouring read that still goes through the wrapper (the fix leaves the run
failing). Each fix is unsafe: ``--fix`` leaves the file alone, and running what
``--unsafe-fixes`` writes shows why.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.runtime.launch import CPU_DDP, RULES, accelerate_launch, launch_env, run_trllint

SCENARIO = RULES / "trl001_wrapped_model_attribute" / "scenario_fix_safety.py"


def _copies(tmp_path: Path) -> tuple[Path, Path]:
    written = tmp_path / "written" / "scenario.py"
    unsafe = tmp_path / "unsafe" / "scenario.py"
    for target in (written, unsafe):
        target.parent.mkdir()
        shutil.copy(SCENARIO, target)
    safe_only = run_trllint("--no-cache", "--preview", "--select", "TRL001", "--fix", str(written))
    assert written.read_text() == SCENARIO.read_text(), "--fix applied a fix that stands on an unproven fact"
    assert "2 fixable with --fix --unsafe-fixes" in safe_only.stdout, safe_only.stdout
    run_trllint("--no-cache", "--preview", "--select", "TRL001", "--fix", "--unsafe-fixes", str(unsafe))
    assert unsafe.read_text() != written.read_text()
    return written, unsafe


def _one_process(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *args], cwd=script.parent, env=launch_env(cpu=True), capture_output=True, text=True, timeout=300
    )


def test_optional_accelerator_fix_breaks_the_run_without_one(tmp_path: Path) -> None:
    written, unsafe = _copies(tmp_path)
    assert "self.accelerator.unwrap_model(self.policy).config" in unsafe.read_text()
    # Under DDP the code as written fails, and the unsafe fix repairs it ...
    broken = accelerate_launch(written, CPU_DDP, script_args=("--case", "optional-accelerator"))
    assert not broken.ok and "object has no attribute 'config'" in broken.output, broken.output[-3000:]
    repaired = accelerate_launch(unsafe, CPU_DDP, script_args=("--case", "optional-accelerator"))
    assert repaired.ok and "TRL001 vocab_size=2" in repaired.output, repaired.output[-3000:]
    # ... but without an accelerator the code as written runs and the fixed code does not.
    plain = _one_process(written, "--case", "optional-accelerator", "--no-accelerator")
    assert plain.returncode == 0 and "TRL001 vocab_size=2" in plain.stdout, plain.stdout + plain.stderr
    fixed_plain = _one_process(unsafe, "--case", "optional-accelerator", "--no-accelerator")
    assert fixed_plain.returncode != 0
    assert "'NoneType' object has no attribute 'unwrap_model'" in fixed_plain.stderr, fixed_plain.stderr[-3000:]


def test_neighbour_left_through_the_wrapper_is_repaired_next(tmp_path: Path) -> None:
    written, unsafe = _copies(tmp_path)
    broken = accelerate_launch(written, CPU_DDP, script_args=("--case", "neighbour"))
    assert not broken.ok and "object has no attribute 'generate_batch'" not in broken.output
    assert "object has no attribute 'generation_config'" in broken.output, broken.output[-3000:]
    # The unsafe fix repairs the line it reports (its reason: the neighbour still goes through the
    # wrapper); its unwrap_model then shows the object is a model, so the fix loop's next pass
    # repairs the neighbour's own method too, and the run completes.
    fixed = accelerate_launch(unsafe, CPU_DDP, script_args=("--case", "neighbour"))
    assert fixed.ok, fixed.output[-3000:]
