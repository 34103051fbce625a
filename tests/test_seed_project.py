"""The product as typed: with no configuration and no flag, `trllint --fix src/` on a project whose
accelerate config shows FSDP finds the four seed bugs (TRL001 to TRL004), fixes them, and the
fixed project lints clean; the pre-commit hook's entry does the same on the staged files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEEDS = {"TRL001", "TRL002", "TRL003", "TRL004"}


def _project(tmp_path: Path) -> Path:
    """The bundled example as a user's project: its code and its FSDP config under src/."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples", root / "src", ignore=shutil.ignore_patterns("__pycache__", "requirements.txt"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _trllint(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trllint", "--no-cache", *args], cwd=root, capture_output=True, text=True, timeout=300
    )


def _codes(output: str) -> set[str]:
    return {word for line in output.splitlines() for word in line.split() if word in SEEDS}


def test_fix_with_no_flag_finds_and_fixes_the_four_seed_bugs(tmp_path: Path):
    root = _project(tmp_path)
    script = root / "src" / "train_dpo_style.py"
    found = _trllint(root, "src/")
    assert found.returncode == 1 and _codes(found.stdout) == SEEDS, found.stdout + found.stderr

    fixed = _trllint(root, "--fix", "src/")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    compile(script.read_text(encoding="utf-8"), str(script), "exec")  # the fixed file parses
    text = script.read_text(encoding="utf-8")
    assert "if self.ref_model is not None:" in text  # TRL003's guard
    assert "device_placement=True" in text  # TRL002
    assert "self.accelerator.gather(" in text  # TRL004

    clean = _trllint(root, "src/")
    assert clean.returncode == 0 and "All checks passed!" in clean.stdout, clean.stdout + clean.stderr


def test_the_pre_commit_entry_behaves_the_same(tmp_path: Path):
    root = _project(tmp_path)
    staged = ["src/train_dpo_style.py", "src/accelerate_configs/fsdp.yaml"]
    hook = _trllint(root, "--force-exclude", *staged)  # the `trllint` hook's entry, on the staged files
    assert hook.returncode == 1 and _codes(hook.stdout) == SEEDS, hook.stdout + hook.stderr
    fixing = _trllint(root, "--fix", "--force-exclude", *staged)  # the `trllint-fix` hook
    assert fixing.returncode == 0, fixing.stdout + fixing.stderr
    assert _trllint(root, "--force-exclude", *staged).returncode == 0
