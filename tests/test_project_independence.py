"""A file's findings do not depend on which other paths were named on the command line.

Pre-commit passes only the staged files: ``trllint src/train.py`` must report for ``train.py``
exactly what ``trllint src/`` reports for it. The project index reads the modules a file imports
from the file's own project, never from the command line, so this holds by construction; the test
shows it on the real corpus the corpus test uses (the installed trl and accelerate, whole
packages copied out of the virtual environment, whose folder is excluded by default): every file
with a finding, and an even sample of files that import other modules of their package, each
linted alone.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from tests.engine_rules import run_cli

PACKAGES = ("trl", "accelerate")
ALONE = 6  # files without findings linted alone, besides every file with one


def _package_root(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _findings(*paths: Path, cwd: Path) -> dict[str, list[tuple]]:
    result = run_cli("--no-cache", "--format", "json", *map(str, paths), cwd=cwd, timeout=1200)
    assert "Traceback" not in result.stderr, result.stderr
    found: dict[str, list[tuple]] = {}
    for f in json.loads(result.stdout):
        path = str((cwd / f["path"]).resolve())
        found.setdefault(path, []).append((f["code"], f["line"], f["column"], f["message"], json.dumps(f.get("fix"))))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_findings_for_a_file_are_the_same_alone_and_with_its_package(package: str, tmp_path: Path):
    installed = _package_root(package)
    if installed is None:
        pytest.skip(f"{package} is not installed (the test extra)")
    root = tmp_path / package
    shutil.copytree(installed, root, ignore=shutil.ignore_patterns("__pycache__"))
    together = _findings(root, cwd=tmp_path)
    with_findings = sorted(together)
    importing = sorted(
        p for p in root.rglob("*.py")
        if "__pycache__" not in p.parts and str(p.resolve()) not in together
        and ("from ." in p.read_text(encoding="utf-8", errors="replace") or f"from {package}." in p.read_text(encoding="utf-8", errors="replace"))
    )
    others = importing[:: max(1, len(importing) // ALONE)][:ALONE]
    if package == "trl":  # its experimental trainers have findings; accelerate may have none
        assert with_findings, "no finding in trl: the comparison would show little"
    for path in [Path(p) for p in with_findings] + others:
        alone = _findings(path, cwd=tmp_path)
        key = str(path.resolve())
        assert sorted(alone.get(key, [])) == sorted(together.get(key, [])), key
