"""The real pre-commit, running this checkout's hooks (``pre-commit try-repo``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

BUGGY = '''\
from accelerate import Accelerator

accelerator = Accelerator()


def prepare_reference(ref_model):
    return accelerator.prepare_model(ref_model, evaluation_mode=True)
'''

# Every rule is preview until it meets the graduation bar: the README tells a project
# that runs the hooks to turn preview on in its configuration.
PREVIEW_ON = "[tool.trllint]\npreview = true\n"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory) -> tuple[Path, Path]:
    home = tmp_path_factory.mktemp("pre-commit-home")
    repo = tmp_path_factory.mktemp("user-repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    # How the user's project runs: FSDP (TRL002's bug needs it) and TRL's vLLM generation (TRL005's).
    (repo / "fsdp.yaml").write_text("distributed_type: FSDP\nnum_processes: 2\n")
    (repo / "grpo.yaml").write_text("use_vllm: true\n")  # a recipe of TRL's GRPO, which the project declares
    (repo / "pyproject.toml").write_text('[project]\nname = "user"\ndependencies = ["trl>=0.20"]\n\n' + PREVIEW_ON)
    subprocess.run(["git", "add", "pyproject.toml"], cwd=repo, check=True)
    return repo, home


def test_fix_hook_fails_on_a_finding_and_rewrites_the_file(user_repo):
    repo, home = user_repo
    target = repo / "train.py"
    target.write_text(BUGGY)
    subprocess.run(["git", "add", "train.py"], cwd=repo, check=True)
    result = pre_commit("try-repo", str(REPO), "trllint-fix", "--files", "train.py", cwd=repo, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout or "Failed" in result.stdout
    assert "device_placement=True" in target.read_text()
    # The next run is clean: the hook passes.
    again = pre_commit("try-repo", str(REPO), "trllint-fix", "--files", "train.py", cwd=repo, home=home)
    assert again.returncode == 0, again.stdout + again.stderr


def test_check_hook_passes_when_no_matching_file_is_staged(user_repo):
    repo, home = user_repo
    (repo / "NOTES.md").write_text("nothing to lint\n")
    result = pre_commit("try-repo", str(REPO), "trllint", "--files", "NOTES.md", cwd=repo, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no files to check" in result.stdout.lower() or "skipped" in result.stdout.lower()


def test_fix_hook_takes_notebooks_and_requirements_folders(user_repo):
    import json

    repo, home = user_repo
    source = [
        "from accelerate import Accelerator, notebook_launcher\n",
        "def main():\n",
        "    accelerator = Accelerator()\n",
        "    model = accelerator.prepare(model)\n",
        "    print(model.config.vocab_size)\n",
        "notebook_launcher(main, num_processes=2)\n",
    ]
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [], "source": source}
    notebook = {"cells": [cell], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    (repo / "requirements").mkdir()
    (repo / "requirements" / "serve.txt").write_text("vllm>=0.6\n")
    subprocess.run(["git", "add", "nb.ipynb", "requirements/serve.txt"], cwd=repo, check=True)
    result = pre_commit(
        "try-repo", str(REPO), "trllint-fix", "--files", "nb.ipynb", "requirements/serve.txt", cwd=repo, home=home
    )
    assert result.returncode == 1, result.stdout + result.stderr
    fixed = json.loads((repo / "nb.ipynb").read_text())["cells"][0]["source"]
    assert fixed[4] == "    print(accelerator.unwrap_model(model).config.vocab_size)\n"
    assert (repo / "requirements" / "serve.txt").read_text() == "vllm>=0.7.2\n"


def test_check_hook_leaves_an_excluded_vendored_folder_alone(user_repo):
    # pre-commit names every staged file; without --force-exclude (on in both hooks) a vendored
    # folder excluded in pyproject.toml blocked every commit that touched it.
    repo, home = user_repo
    (repo / "pyproject.toml").write_text(PREVIEW_ON + 'extend-exclude = ["third_party"]\n')
    (repo / "third_party").mkdir(exist_ok=True)
    (repo / "third_party" / "train.py").write_text(BUGGY)
    (repo / "mine.py").write_text(BUGGY)
    subprocess.run(["git", "add", "pyproject.toml", "third_party/train.py", "mine.py"], cwd=repo, check=True)
    vendored = pre_commit("try-repo", str(REPO), "trllint", "--files", "third_party/train.py", cwd=repo, home=home)
    assert vendored.returncode == 0, vendored.stdout + vendored.stderr
    own = pre_commit("try-repo", str(REPO), "trllint", "--files", "mine.py", "third_party/train.py", cwd=repo, home=home)
    assert own.returncode == 1, own.stdout + own.stderr
    assert "mine.py" in own.stdout and "third_party" not in own.stdout
    (repo / "mine.py").unlink()
    shutil.rmtree(repo / "third_party")
    subprocess.run(["git", "rm", "-q", "--cached", "-r", "mine.py", "third_party"], cwd=repo, check=True)
    (repo / "pyproject.toml").write_text(PREVIEW_ON)
    subprocess.run(["git", "add", "pyproject.toml"], cwd=repo, check=True)


def test_hooks_follow_the_configurations_preview(user_repo):
    # TRL006 is a preview rule: the hook runs it only where the user's configuration turns
    # preview on, as a run at the terminal does. Without preview the stable kinds run, and
    # this file has none of theirs.
    repo, home = user_repo
    (repo / "pyproject.toml").write_text("[tool.trllint]\n")
    (repo / "dist_eval.py").write_text(
        "from accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\n"
        "def evaluate(batch):\n    if accelerator.is_main_process:\n"
        "        total = accelerator.reduce(batch, reduction=\"sum\")\n        print(total)\n"
    )
    subprocess.run(["git", "add", "dist_eval.py", "pyproject.toml"], cwd=repo, check=True)
    off = pre_commit("try-repo", str(REPO), "trllint", "--files", "dist_eval.py", cwd=repo, home=home)
    assert off.returncode == 0, off.stdout + off.stderr
    assert "TRL006" not in off.stdout, off.stdout
    (repo / "pyproject.toml").write_text(PREVIEW_ON)
    subprocess.run(["git", "add", "pyproject.toml"], cwd=repo, check=True)
    preview = pre_commit("try-repo", str(REPO), "trllint", "--files", "dist_eval.py", cwd=repo, home=home)
    assert preview.returncode == 1 and "TRL006" in preview.stdout, preview.stdout + preview.stderr
    (repo / "dist_eval.py").unlink()
    subprocess.run(["git", "rm", "-q", "--cached", "dist_eval.py"], cwd=repo, check=True)
