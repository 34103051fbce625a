"""TRL005 across a project's requirements files: requirements/ folders, -r / -c includes (inside
the tree only, cycles included), files the user names, and the pre-commit hook's file pattern."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePath

import pytest

from trllint.core.requirements_files import is_requirements_path
from trllint.engine.inputs.requirements import included_files
from trllint.rules.trl005_known_bad_dependency.dependencies import poetry_specifier

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "requirements").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n', encoding="utf-8")
    # The project runs TRL's vLLM generation, where the known-bad vLLM range bites.
    (root / "train_grpo.py").write_text("from trl import GRPOConfig\nargs = GRPOConfig(use_vllm=True)\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def findings(cli, *args: str) -> list[tuple[str, int]]:
    # --preview: TRL005 is a preview rule.
    result = cli("--no-cache", "--preview", "--select", "TRL005", "--format", "json", *args)
    return sorted((f["path"], f["line"]) for f in json.loads(result.out))


def test_fix_on_a_requirements_tree_with_an_include_cycle(cli, project, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("vllm>=0.5\n", encoding="utf-8")
    (project / "requirements" / "base.txt").write_text("-r gpu.txt\ntorch>=2.5\nvllm>=0.6  # server\n", encoding="utf-8")
    (project / "requirements" / "gpu.txt").write_text(
        "--requirement base.txt\n-c ../constraints/pins.txt\n-r ../../outside.txt\n-r /etc/hostname\nvllm[audio]>=0.7.0\n",
        encoding="utf-8",
    )
    (project / "constraints").mkdir()
    (project / "constraints" / "pins.txt").write_text("vllm<0.9\n", encoding="utf-8")

    result = cli("--no-cache", "--preview", "--select", "TRL005", "--fix", ".")
    assert result.code == 0, result.out + result.err
    assert "3 fixed, 0 remaining" in result.out
    assert (project / "requirements" / "base.txt").read_text() == "-r gpu.txt\ntorch>=2.5\nvllm>=0.7.2  # server\n"
    assert (project / "requirements" / "gpu.txt").read_text().endswith("vllm[audio]>=0.7.2\n")
    assert (project / "constraints" / "pins.txt").read_text() == "vllm>=0.7.2,<0.9\n"  # reached only through -c
    assert outside.read_text() == "vllm>=0.5\n"  # outside the tree: never read, never written


def test_a_file_named_on_the_command_line_is_read_and_its_includes_followed(cli, project):
    (project / "deps").mkdir()
    (project / "deps" / "serve.txt").write_text("-r common.txt\nvllm==0.7.0\n", encoding="utf-8")
    (project / "deps" / "common.txt").write_text("vllm~=0.6\n", encoding="utf-8")
    assert findings(cli, "deps/serve.txt") == [("deps/common.txt", 1), ("deps/serve.txt", 2)]
    # Walking the tree does not take deps/*.txt: only requirements files and what they include.
    assert findings(cli, ".") == []


def test_an_include_into_an_excluded_folder_is_not_followed(cli, project):
    (project / "pyproject.toml").write_text('[tool.trllint]\nextend-exclude = ["vendor"]\n', encoding="utf-8")
    (project / "vendor").mkdir()
    (project / "vendor" / "pins.txt").write_text("vllm>=0.5\n", encoding="utf-8")
    (project / "requirements.txt").write_text("-c vendor/pins.txt\n-r requirements/extra.txt\n", encoding="utf-8")
    (project / "requirements" / "extra.txt").write_text("vllm~=0.6.0\n", encoding="utf-8")
    assert findings(cli, ".") == [("requirements/extra.txt", 1)]


def test_requirements_folders_are_walked_and_other_text_files_are_not(cli, project):
    (project / "requirements" / "vllm.in").write_text("vllm>=0.6\n", encoding="utf-8")
    (project / "requirements" / "docs.txt").write_text("mkdocs\n", encoding="utf-8")
    (project / "README.txt").write_text("vllm 0.6 was slow\n", encoding="utf-8")
    (project / "notes.txt").write_text("vllm>=0.6\n", encoding="utf-8")  # looks like one, not named like one
    assert findings(cli, ".") == [("requirements/vllm.in", 1)]
    assert findings(cli, "README.txt") == []  # named, but prose: not a requirements file


def test_pyproject_uv_and_poetry_tables(cli, project):
    (project / "pyproject.toml").write_text(
        '[tool.poetry.dependencies]\npython = "^3.10"\nvllm = "^0.6"\n\n'
        '[tool.uv]\nconstraint-dependencies = ["vllm<0.8"]\n',
        encoding="utf-8",
    )
    assert findings(cli, ".") == [("pyproject.toml", 3), ("pyproject.toml", 6)]
    result = json.loads(cli("--no-cache", "--preview", "--select", "TRL005", "--format", "json", ".").out)
    assert result[0]["fix"] is None  # Poetry's caret has no spelling the fix could keep
    assert result[1]["fix"] is not None


@pytest.mark.parametrize(
    "constraint, specifier",
    [("^0.6", ">=0.6,<0.7"), ("^1.2.3", ">=1.2.3,<2"), ("^0.0.3", ">=0.0.3,<0.0.4"), ("~0.6.1", ">=0.6.1,<0.7"),
     ("0.6.3", "==0.6.3"), (">=0.6, <0.8", ">=0.6,<0.8"), (">=0.6 <0.8", ">=0.6,<0.8"), ("*", ""), ("^0.6 || ^0.8", None)],
)
def test_poetry_constraints_as_pep_440(constraint, specifier):
    assert poetry_specifier(constraint) == specifier


def test_include_lines():
    text = "-r base.txt\n--requirement=dev.txt\n--constraint  pins.txt\n-cother.txt\n-r https://x.org/r.txt\n# -r no.txt\n-e .\n"
    assert included_files(text) == ["base.txt", "dev.txt", "pins.txt", "other.txt"]


@pytest.mark.parametrize(
    "path, expected",
    [("requirements.txt", True), ("requirements-gpu.in", True), ("ci/dev-requirements.txt", True),
     ("requirements/vllm.txt", True), ("src/requirements/x.in", True), ("README.txt", False),
     ("requirements/README.md", False), ("deps/gpu.txt", False)],
)
def test_requirements_paths(path, expected):
    assert is_requirements_path(PurePath(path)) is expected


def test_pre_commit_hooks_take_notebooks_and_requirements_folders():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    patterns = re.findall(r"files: '([^']+)'", hooks)
    assert len(patterns) == 2 and all("jupyter" in line for line in hooks.splitlines() if "types_or" in line)
    for pattern in patterns:
        for name in ("train.py", "nb.ipynb", "requirements/vllm.txt", "requirements-dev.in", "sub/pyproject.toml"):
            assert re.search(pattern, name), (pattern, name)
        for name in ("README.txt", "notes/requirements.md", "data.json"):
            assert not re.search(pattern, name), (pattern, name)
