"""The wheel carries the rule pack: installed into a fresh environment, run from elsewhere."""

from __future__ import annotations

import shutil
import zipfile
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RULE_FOLDERS = sorted(p for p in (REPO / "rules").iterdir() if (p / "rule.py").is_file())


def _copy_checkout(destination: Path) -> Path:
    ignore = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".trllint_cache", ".hypothesis", ".whl")
    shutil.copytree(REPO, destination, ignore=ignore)
    return destination


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """trllint's wheel, built from a copy of the checkout."""
    root = tmp_path_factory.mktemp("wheel")
    source = _copy_checkout(root / "src")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"),
         str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return next((root / "dist").glob("trllint-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel: Path) -> Path:
    """A new virtual environment with trllint's wheel and its two dependencies, nothing else."""
    env_dir = wheel.parent.parent / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return env_dir


def run_installed(env_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(env_dir / "bin" / "trllint"), *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PATH": str(env_dir / "bin"), "HOME": str(cwd)},
    )


def test_installed_wheel_lists_and_explains_every_rule(installed, tmp_path):
    assert RULE_FOLDERS, "the checkout has rules"
    listing = run_installed(installed, "--list-rules", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    for folder in RULE_FOLDERS:
        code = folder.name.split("_", 1)[0].upper()
        assert code in listing.stdout
        explained = run_installed(installed, "--explain", code, cwd=tmp_path)
        assert explained.returncode == 0
        # The page, with the rule's status (stable or preview) under its title.
        title, _, body = (folder / "README.md").read_text(encoding="utf-8").partition("\n")
        assert explained.stdout.startswith(f"{title}\n\nStatus: ") and explained.stdout.endswith(body.lstrip("\n"))


def test_installed_wheel_lints_from_outside_the_checkout(installed, tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    # As the README's quickstart types it, with no flag: the installed pack carries its
    # graduation files, so the default selection is not empty and the syntax check runs with it.
    result = run_installed(installed, "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bad.py:1:" in result.stdout and "TRL000" in result.stdout
    listed = run_installed(installed, "--list-rules", cwd=tmp_path)
    assert any(line.split()[:1] == ["TRL004"] and "stable" in line for line in listed.stdout.splitlines()), listed.stdout
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import trllint.rules, trllint; print(trllint.__file__)"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert where.returncode == 0 and str(installed) in where.stdout, where.stdout + where.stderr


def test_wheel_carries_every_rule_folder_whole(wheel: Path):
    """Each rules/<folder>/ ships as trllint/rules/<folder>/ with every file the checkout has
    (a folder without __init__.py used to be left out silently)."""
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for folder in RULE_FOLDERS:
        files = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
        expected = {f"trllint/rules/{folder.name}/{p.relative_to(folder).as_posix()}" for p in files}
        assert f"trllint/rules/{folder.name}/__init__.py" in expected, f"{folder.name} has no __init__.py"
        assert not expected - shipped, f"{folder.name}: not in the wheel: {sorted(expected - shipped)}"
