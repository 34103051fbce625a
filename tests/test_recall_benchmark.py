"""The recall benchmark (benchmarks/recall/run.py) on a small git repository made here."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "recall" / "run.py"
_spec = importlib.util.spec_from_file_location("recall_run", _SCRIPT)
assert _spec and _spec.loader
recall_run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = recall_run  # dataclasses look their module up
_spec.loader.exec_module(recall_run)

BUGGY = """\
from accelerate import Accelerator


def train(model, optimizer, loader):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
    vocab = model.config.vocab_size
    return vocab
"""

FIXED = BUGGY.replace("vocab = model.config", "vocab = accelerator.unwrap_model(model).config")


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder,
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def _mirror_of(tmp_path: Path, buggy: dict[str, str], fixed: dict[str, str]) -> tuple[Path, str, str]:
    """A mirror folder holding acme+trainer/repo: a commit of the files ``buggy`` names (path ->
    text), then one that rewrites those ``fixed`` names; returns it, the parent and the fix."""
    work = tmp_path / "work"
    work.mkdir(parents=True)
    _git(work, "init", "-q")
    commits = []
    for step, files in (("buggy", buggy), ("fix", fixed)):
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        _git(work, "add", ".")
        _git(work, "commit", "-qm", step)
        commits.append(_git(work, "rev-parse", "HEAD"))
    parent, fix = commits
    mirror = tmp_path / "mirror"
    (mirror / "acme+trainer").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "acme+trainer" / "repo")], check=True)
    return mirror, parent, fix


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """A mirror folder holding acme+trainer/repo, whose last commit fixes a TRL001 bug."""
    return _mirror_of(tmp_path, {"src/train.py": BUGGY}, {"src/train.py": FIXED})


def _pairs(tmp_path: Path, parent: str, fix: str, lines: list[int]) -> Path:
    path = tmp_path / "pairs.toml"
    path.write_text(
        "[[pair]]\n"
        'id = "acme-config"\nproject = "trl"\nrepo = "acme/trainer"\n'
        f'fix = "{fix}"\nparent = "{parent}"\npath = "src/train.py"\ncode = "TRL001"\n'
        f"lines = {lines}\n"
        'description = "model.config read through the accelerate wrapper"\n'
    )
    return path


def test_a_caught_bug_and_a_silent_fix(tmp_path, mirror, capsys):
    folder, parent, fix = mirror
    out = tmp_path / "out.json"
    code = recall_run.main(["--mirror", str(folder), "--pairs", str(_pairs(tmp_path, parent, fix, [10])),
                            "--json", str(out)])
    assert code == 0
    [row] = json.loads(out.read_text())
    assert row["caught"] is True and row["fix_silent"] is True
    assert row["parent_lines"] == [10] and row["fix_lines"] == []
    assert row["caught_kinds"] == ["prepared-launch-unknown"]
    assert row["split"] == "dev"  # "trl" is one of the projects the rules were tuned on
    assert "| TRL001 | 1 / 1, 1 |" in capsys.readouterr().out


def test_a_finding_far_from_the_bug_lines_does_not_count(tmp_path, mirror):
    folder, parent, fix = mirror
    out = tmp_path / "out.json"
    recall_run.main(["--mirror", str(folder), "--pairs", str(_pairs(tmp_path, parent, fix, [3])),
                     "--json", str(out)])
    [row] = json.loads(out.read_text())
    assert row["parent_lines"] == [10]
    assert row["caught"] is False and row["caught_kinds"] == []


def test_a_missing_snapshot_is_an_error_not_a_miss(tmp_path, mirror, capsys):
    _, parent, fix = mirror
    empty = tmp_path / "empty"
    empty.mkdir()
    code = recall_run.main(["--mirror", str(empty), "--pairs", str(_pairs(tmp_path, parent, fix, [10]))])
    assert code == 1
    assert "no git snapshot of acme/trainer" in capsys.readouterr().out


def test_fix_region_follows_the_bug_lines_through_the_diff():
    parent = "a\nb\nbug\nc\n"
    fixed = "x\na\nb\nfixed 1\nfixed 2\nc\n"
    assert recall_run.fix_region(parent, fixed, (3,)) == (4, 5)  # replaced: the fix's own lines
    assert recall_run.fix_region(parent, fixed, (4,)) == (6, 6)  # unchanged: the line moved by one


def test_a_pair_without_its_lines_is_refused(tmp_path):
    path = tmp_path / "pairs.toml"
    path.write_text('[[pair]]\nid = "x"\nproject = "trl"\nrepo = "a/b"\nfix = "f"\nparent = "p"\n'
                    'path = "x.py"\ncode = "TRL001"\ndescription = "d"\n')
    with pytest.raises(SystemExit, match="has no lines"):
        recall_run.read_pairs(path)


def test_the_split_rule_hashes_other_projects():
    assert recall_run.split_of("trl") == "dev"
    assert recall_run.split_of("karpathy/nanoGPT") == "test"  # sha256 begins with 3
    assert recall_run.split_of("huggingface/diffusers") == "dev"  # sha256 begins with f


def test_results_add_the_recall_per_rule_both_ways_and_keep_the_precision(tmp_path, mirror):
    folder, parent, fix = mirror
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"format": 1, "splits": {"test": {}}, "recall": {"stale": True}}))
    code = recall_run.main(["--mirror", str(folder), "--pairs", str(_pairs(tmp_path, parent, fix, [10])),
                            "--results", str(results)])
    assert code == 0
    document = json.loads(results.read_text())
    assert document["format"] == 1 and document["splits"] == {"test": {}}  # the precision run's keys stay
    recall = document["recall"]
    assert "stale" not in recall and len(recall["commit"]) == 40 and recall["pairs_file"] == "pairs.toml"
    # No launch shows the wrapper: the finding is of an unproven kind, which the default never shows.
    assert recall["rules"] == {"TRL001": {"pairs": 1, "caught_preview": 1, "caught_default": 0, "errors": 0}}


FSDP_BUGGY = """\
from accelerate import Accelerator


def main(policy, reference, optimizer, loader):
    accelerator = Accelerator()
    policy, optimizer, loader = accelerator.prepare(policy, optimizer, loader)
    reference = accelerator.prepare_model(reference, evaluation_mode=True)
    for batch in loader:
        accelerator.backward(policy(**batch).loss - reference(**batch).loss)
"""

FSDP_CONFIG = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 8\n"
LAUNCH = "accelerate launch --config_file configs/fsdp.yaml src/train.py\n"


@pytest.fixture
def fsdp_mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """A project whose launch (a config and a script beside the trainer) is FSDP; its last commit
    places the reference model. Its own [tool.trllint] would ignore the rule."""
    buggy = {
        "src/train.py": FSDP_BUGGY,
        "configs/fsdp.yaml": FSDP_CONFIG,
        "train.sh": LAUNCH,
        "pyproject.toml": '[project]\nname = "dpo"\n\n[tool.trllint]\nignore = ["TRL002"]\n',
    }
    placed = FSDP_BUGGY.replace("evaluation_mode=True)", "evaluation_mode=True, device_placement=True)")
    return _mirror_of(tmp_path, buggy, {"src/train.py": placed})


def test_in_its_project_the_launch_proves_the_finding_the_file_alone_does_not(tmp_path, fsdp_mirror):
    folder, parent, fix = fsdp_mirror
    pairs = _pairs(tmp_path, parent, fix, [7])
    pairs.write_text(pairs.read_text().replace('code = "TRL001"', 'code = "TRL002"'))
    in_project, alone = tmp_path / "in-project.json", tmp_path / "alone.json"
    for extra, out in (([], in_project), (["--file-alone"], alone)):
        code = recall_run.main(["--mirror", str(folder), "--pairs", str(pairs), "--results", str(out), *extra])
        assert code == 0
    # The FSDP launch is in the project's config and script: a proven kind, on by default. The
    # project's own `ignore = ["TRL002"]` is not applied.
    recall = json.loads(in_project.read_text())["recall"]
    assert recall["method"] == "in its project"
    assert recall["rules"] == {"TRL002": {"pairs": 1, "caught_preview": 1, "caught_default": 1, "errors": 0}}
    # The file alone shows no launch: only the unproven preview kind finds it.
    recall = json.loads(alone.read_text())["recall"]
    assert recall["method"] == "alone"
    assert recall["rules"] == {"TRL002": {"pairs": 1, "caught_preview": 1, "caught_default": 0, "errors": 0}}
