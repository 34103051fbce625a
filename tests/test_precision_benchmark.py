"""The precision benchmark's matching and report (benchmarks/precision/run.py), without downloads."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "precision" / "run.py"
_spec = importlib.util.spec_from_file_location("precision_run", _SCRIPT)
assert _spec and _spec.loader
precision_run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = precision_run  # dataclasses look their module up
_spec.loader.exec_module(precision_run)


def _label(path, line, code, verdict, package="trl", version="1.16.0"):
    return {"package": package, "version": version, "path": path, "line": line, "code": code,
            "verdict": verdict, "reason": "evidence at x.py:1"}


def _write(folder: Path, labels: list[dict]) -> None:
    by_code: dict[str, list[dict]] = {}
    for label in labels:
        by_code.setdefault(label["code"], []).append(label)
    for code, rows in by_code.items():
        (folder / f"{code}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_counts_verdicts_unlabelled_and_stale_per_rule(tmp_path):
    _write(tmp_path, [
        _label("a.py", 3, "TRL001", "real"),
        _label("a.py", 9, "TRL001", "debatable"),
        _label("b.py", 5, "TRL004", "wrong"),
        _label("gone.py", 1, "TRL004", "real"),  # no finding any more: stale
        _label("other.py", 1, "TRL004", "real", package="verl", version="0.9.1"),  # not linted
    ])
    pin = precision_run.Pin("trl", "1.16.0")
    findings = [precision_run.finding_key(pin, f) for f in (
        {"path": "a.py", "line": 3, "code": "TRL001"},
        {"path": "a.py", "line": 9, "code": "TRL001"},
        {"path": "b.py", "line": 5, "code": "TRL004"},
        {"path": "b.py", "line": 6, "code": "TRL004"},  # nobody labelled it
    )]
    result = precision_run.compare(findings, precision_run.read_labels(tmp_path), {("trl", "1.16.0")})

    assert result.unlabelled == [("trl", "1.16.0", "b.py", 6, "TRL004")]
    assert result.stale == [("trl", "1.16.0", "gone.py", 1, "TRL004")]
    trl001, trl004 = result.counts["TRL001"], result.counts["TRL004"]
    assert (trl001["findings"], trl001["real"], trl001["debatable"]) == (2, 1, 1)
    assert (trl004["findings"], trl004["wrong"], trl004["unlabelled"]) == (2, 1, 1)
    # Strict precision: debatable and unlabelled count as not real.
    assert precision_run.precision(trl001) == 0.5
    assert precision_run.precision(trl004) == 0.0
    table = precision_run.table(result)
    assert "| TRL001 | 2 | 1 | 0 | 1 | 0 | 50 % |" in table
    assert "| all | 4 | 1 | 1 | 1 | 1 | 25 % |" in table


def test_a_label_without_reason_or_with_an_unknown_verdict_is_refused(tmp_path):
    _write(tmp_path, [_label("a.py", 1, "TRL001", "maybe")])
    with pytest.raises(SystemExit, match="verdict"):
        precision_run.read_labels(tmp_path)
    bad = _label("a.py", 1, "TRL001", "real")
    bad["reason"] = " "
    _write(tmp_path, [bad])
    with pytest.raises(SystemExit, match="reason"):
        precision_run.read_labels(tmp_path)


def test_a_finding_labelled_twice_is_refused(tmp_path):
    label = _label("a.py", 1, "TRL001", "real")
    (tmp_path / "TRL001.jsonl").write_text(json.dumps(label) + "\n" + json.dumps(label) + "\n")
    with pytest.raises(SystemExit, match="twice"):
        precision_run.read_labels(tmp_path)


def test_pins_read_names_versions_and_skip_comments(tmp_path):
    listing = tmp_path / "packages.txt"
    listing.write_text("# pinned\ntrl==1.16.0\n\nms-swift==4.6.0  # trainer code\n")
    assert precision_run.read_pins(listing) == [
        precision_run.Pin("trl", "1.16.0"), precision_run.Pin("ms-swift", "4.6.0")
    ]


def test_archive_names_normalise_dashes(tmp_path):
    (tmp_path / "ms_swift-4.6.0-py3-none-any.whl").write_bytes(b"")
    (tmp_path / "deepspeed-0.19.8.tar.gz").write_bytes(b"")
    assert precision_run.find_archive(precision_run.Pin("ms-swift", "4.6.0"), tmp_path).name.startswith("ms_swift")
    assert precision_run.find_archive(precision_run.Pin("deepspeed", "0.19.8"), tmp_path).name.endswith(".tar.gz")
    assert precision_run.find_archive(precision_run.Pin("deepspeed", "0.19.9"), tmp_path) is None


def test_repository_pins_read_commit_and_folder_and_refuse_anything_else(tmp_path):
    listing = tmp_path / "repos.txt"
    commit = "3adf61e154c3fe3fca428ad6bc3818b27a3b8291"
    listing.write_text(f"# pinned\nkarpathy/nanoGPT@{commit}\nhuggingface/diffusers@{commit}:examples  # only\n")
    nano, diffusers = precision_run.read_repo_pins(listing)
    assert (nano.name, nano.version, nano.folder_in_repo, nano.is_repo) == ("karpathy/nanoGPT", commit, "", True)
    assert nano.folder == "karpathy+nanoGPT-3adf61e154c3"
    assert diffusers.folder_in_repo == "examples"
    listing.write_text("karpathy/nanoGPT@main\n")  # a branch moves: only a commit pins
    with pytest.raises(SystemExit, match="repos.txt:1: expected"):
        precision_run.read_repo_pins(listing)


def test_the_split_is_fixed_by_name_and_the_tuned_releases_are_dev():
    # The tuned releases are dev whatever their hash ("trl" would hash to test).
    assert precision_run.split_of("trl") == "dev"
    assert precision_run.Pin("trl", "0.12.2").split == "dev"
    # Every other project: test when sha256(name)'s first hex digit is 0-7. These values are the
    # split as decided once; a change of the rule breaks them.
    assert precision_run.split_of("karpathy/nanoGPT") == "test"
    assert precision_run.split_of("huggingface/open-r1") == "dev"
    assert precision_run.split_of("lightning") == "test"
    assert precision_run.split_of("sentence-transformers") == "dev"


def test_a_split_report_has_one_table_per_split_and_one_over_both(tmp_path):
    _write(tmp_path, [_label("train.py", 3, "TRL004", "wrong", package="karpathy/nanoGPT", version="c" * 40),
                      _label("a.py", 1, "TRL004", "real")])
    dev, test = precision_run.Pin("trl", "1.16.0"), precision_run.Pin("karpathy/nanoGPT", "c" * 40)
    findings = [("trl", "1.16.0", "a.py", 1, "TRL004"), ("karpathy/nanoGPT", "c" * 40, "train.py", 3, "TRL004")]
    report, whole = precision_run.split_report(findings, precision_run.read_labels(tmp_path), [dev, test])
    dev_part, test_part, all_part = report.split("### ")[1:]
    assert dev_part.startswith("dev: 1 pins") and "| TRL004 | 1 | 1 | 0 | 0 | 0 | 100 % |" in dev_part
    assert test_part.startswith("test: 1 pins") and "| TRL004 | 1 | 0 | 1 | 0 | 0 | 0 % |" in test_part
    assert "| TRL004 | 2 | 1 | 1 | 0 | 0 | 50 % |" in all_part
    assert precision_run.select_pins([dev, test], "test", None) == [test]
    assert precision_run.select_pins([dev, test], "all", "trl") == [dev]


def test_a_repository_missing_from_the_mirror_is_a_clear_message(tmp_path):
    pin = precision_run.Pin("karpathy/nanoGPT", "c" * 40)
    with pytest.raises(SystemExit, match="no git directory of karpathy/nanoGPT under"):
        precision_run.materialise(pin, tmp_path, tmp_path / "src")


def test_a_pinned_commit_is_written_out_as_its_own_work_tree(tmp_path):
    import subprocess

    work = tmp_path / "upstream"
    (work / "examples").mkdir(parents=True)
    (work / "examples" / "train.py").write_text("print('train')\n")
    (work / "setup.py").write_text("")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (work / ".git").rename(mirror / "owner+repo")  # a bare-like git directory, as DIR/owner+name
    pin = precision_run.Pin("owner/repo", commit, "examples")
    root = precision_run.materialise(pin, mirror, tmp_path / "src")
    assert (root / "examples" / "train.py").read_text() == "print('train')\n"
    assert not (root / "setup.py").exists()  # only the pinned folder
    assert (root / ".git").is_dir()


def test_a_snapshot_that_lacks_a_big_blob_is_written_out_without_it(tmp_path, capsys):
    import subprocess

    work = tmp_path / "upstream"
    work.mkdir()
    (work / "train.py").write_text("print('train')\n")
    (work / "data.json").write_text("[1, 2, 3]\n")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    data_blob = subprocess.run([*git, "rev-parse", "HEAD:data.json"], capture_output=True, text=True,
                               check=True).stdout.strip()
    # The snapshot's store drops files over its size limit: remove that blob's loose object.
    (work / ".git" / "objects" / data_blob[:2] / data_blob[2:]).unlink()
    mirror = tmp_path / "mirror" / "owner+repo"
    mirror.parent.mkdir()
    (work / ".git").rename(mirror)
    root = precision_run.materialise(precision_run.Pin("owner/repo", commit), mirror.parent, tmp_path / "src")
    assert (root / "train.py").read_text() == "print('train')\n"
    assert not (root / "data.json").exists()
    assert "left out: owner+repo-" in capsys.readouterr().err


def test_the_pinned_corpus_parses_and_holds_sixty_projects_on_both_splits():
    here = _SCRIPT.parent
    pins = precision_run.read_pins(here / "packages.txt") + precision_run.read_repo_pins(here / "repos.txt")
    projects = {p.name for p in pins}
    assert len(projects) >= 60
    assert len({p.folder for p in pins}) == len(pins)  # no two pins share a cache folder
    splits = {p.split for p in pins}
    assert splits == {"dev", "test"}
    # Every tuned release is declared dev, and every declared name is pinned.
    assert precision_run.DECLARED_DEV <= projects


def test_every_pin_of_the_sealed_test_split_is_test_whatever_its_hash():
    here = _SCRIPT.parent
    sealed = precision_run.read_repo_pins(here / "repos-test.txt")
    assert len({p.name for p in sealed}) == len(sealed) >= 240
    assert {p.split for p in sealed} == {"test"}
    assert all(precision_run.split_of(p.name) == "test" for p in sealed)
    # One whose hash alone would make it dev: the declaration decides.
    assert hashlib.sha256(b"karpathy/nanochat").hexdigest()[0] >= "8"
    assert precision_run.split_of("karpathy/nanochat") == "test"


def test_the_sealed_test_split_leaves_every_other_pin_where_its_hash_put_it():
    here = _SCRIPT.parent
    others = precision_run.read_pins(here / "packages.txt") + precision_run.read_repo_pins(here / "repos.txt")
    sealed = precision_run.read_repo_pins(here / "repos-test.txt")
    assert not {p.name.lower() for p in sealed} & {p.name.lower() for p in others}
    for pin in others:
        by_hash = "test" if hashlib.sha256(pin.name.encode()).hexdigest()[0] < "8" else "dev"
        assert pin.split == ("dev" if pin.name in precision_run.DECLARED_DEV else by_hash)
    assert len({p.folder for p in others + sealed}) == len(others + sealed)  # no two share a cache folder


def test_every_pin_of_the_declared_dev_batch_is_dev_and_decided_nowhere_else():
    here = _SCRIPT.parent
    batch = precision_run.read_repo_pins(here / "repos-dev.txt")
    assert len({p.name for p in batch}) == len(batch) >= 40
    assert {p.split for p in batch} == {"dev"}
    # Declared dev whatever its hash: a batch must not move a project the hash or another file placed.
    others = (
        precision_run.read_pins(here / "packages.txt") + precision_run.read_repo_pins(here / "repos.txt")
        + precision_run.read_repo_pins(here / "repos-test.txt")
    )
    assert not {p.name.lower() for p in batch} & {p.name.lower() for p in others}
    recall_projects = set(re.findall(r'^repo = "([^"]+)"', (here.parent / "recall" / "pairs.toml").read_text(), re.M))
    assert not {p.name.lower() for p in batch} & {r.lower() for r in recall_projects}
    assert any(hashlib.sha256(p.name.encode()).hexdigest()[0] < "8" for p in batch)  # the declaration decides
    assert len({p.folder for p in others + batch}) == len(others + batch)  # no two share a cache folder


def test_list_shows_the_sealed_test_split(capsys):
    assert precision_run.main(["--list", "--split", "test", "--packages", "karpathy/nanochat"]) == 0
    assert capsys.readouterr().out.startswith("test\tkarpathy/nanochat\t")


def test_numbers_per_kind_with_labellers_and_safe_fixes_audited_broken(tmp_path):
    labels = [_label("a.py", 3, "TRL004", "real"), _label("a.py", 9, "TRL004", "debatable"),
              _label("b.py", 5, "TRL004", "wrong")]
    labels[0]["labeller"] = labels[2]["labeller"] = "helper-x"
    _write(tmp_path, labels)
    pin = precision_run.Pin("trl", "1.16.0")
    raw = [{"path": "a.py", "line": 3, "code": "TRL004", "kind": "per-rank-value"},
           {"path": "a.py", "line": 9, "code": "TRL004", "kind": "per-rank-value"},
           {"path": "b.py", "line": 5, "code": "TRL004", "kind": "per-rank-value-launch-unknown"},
           {"path": "c.py", "line": 1, "code": "TRL004", "kind": "per-rank-value"}]  # unlabelled
    keys = [precision_run.finding_key(pin, f) for f in raw]
    kinds = dict(zip(keys, (f["kind"] for f in raw)))
    audit = tmp_path / "audit" / "fix_audit.jsonl"  # beside, not among, the labels
    audit.parent.mkdir()
    audit.write_text("".join(json.dumps({**_label(path, line, "TRL004", "x"), "verdict": verdict}) + "\n"
                             for path, line, verdict in (("a.py", 3, "broken"), ("a.py", 9, "correct"))))
    numbers = precision_run.per_kind(keys, kinds, precision_run.read_labels(tmp_path),
                                     precision_run.results.read_fix_audit(audit), [pin])
    assert set(numbers) == {"dev"}
    proven = numbers["dev"]["TRL004"]["per-rank-value"]
    assert proven == {"findings": 3, "real": 1, "wrong": 0, "debatable": 1, "unlabelled": 1,
                      "strict_precision": 0.3333, "labellers": ["(unnamed)", "helper-x"], "broken_safe_fixes": 1}
    assert numbers["dev"]["TRL004"]["per-rank-value-launch-unknown"]["wrong"] == 1
    report, _ = precision_run.split_report(keys, precision_run.read_labels(tmp_path), [pin], numbers)
    assert "Per finding kind (dev):" in report and "### all" not in report  # one split: no table over both
    assert "| TRL004 | per-rank-value | 3 | 1 | 0 | 1 | 1 | 33 % | 1 | (unnamed), helper-x |" in report


def test_the_result_file_keeps_the_recall_an_earlier_run_wrote(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"recall": {"rules": {"TRL001": {"pairs": 2}}}, "splits": {"old": {}}}))
    document = precision_run.results.precision_document(
        linted_at=precision_run.results.checkout_state(Path(__file__).resolve().parent.parent),
        projects={"dev": 1, "test": 0}, splits={"dev": {}}, selection={"split": "dev", "packages": "trl"},
    )
    precision_run.results.write_results(path, document, keep=("recall",))
    written = json.loads(path.read_text())
    assert written["recall"] == {"rules": {"TRL001": {"pairs": 2}}}
    assert written["splits"] == {"dev": {}} and written["projects"] == {"dev": 1, "test": 0}
    assert len(written["commit"]) == 40 and written["format"] == 1 and re.fullmatch(r"\d{4}-\d\d-\d\d", written["date"])


def test_rescore_scores_a_snapshot_without_linting_and_reports_the_commit_that_linted(tmp_path, monkeypatch):
    """--rescore reads each project's output from a --snapshot folder: no source, no lint, and the
    result file names the commit written beside the outputs, not today's checkout."""
    pin = precision_run.Pin("karpathy/nanoGPT", "a" * 40)
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    finding = {"code": "TRL004", "path": "train.py", "line": 3, "message": "m", "kind": "per-rank-value",
               "fix": {"applicability": "safe"}}
    (snapshot / f"{pin.folder}.json").write_text(json.dumps([finding]))
    (snapshot / precision_run.SNAPSHOT_COMMIT).write_text(json.dumps(["b" * 40, False]))
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "TRL004.jsonl").write_text(json.dumps(
        {"package": pin.name, "version": pin.version, "path": "train.py", "line": 3, "code": "TRL004", "verdict": "real",
         "reason": "r", "labeller": "helper-x"}) + "\n")
    monkeypatch.setattr(precision_run, "select_pins", lambda pins, split, packages: [pin])
    monkeypatch.setattr(precision_run, "lint", lambda *a: pytest.fail("--rescore must not lint"))
    monkeypatch.setattr(precision_run, "materialise", lambda *a: pytest.fail("--rescore must not read sources"))
    out = tmp_path / "results.json"
    code = precision_run.main(["--rescore", str(snapshot), "--labels", str(labels), "--cache", str(tmp_path / "cache"),
                               "--fix-audit", str(tmp_path / "none.jsonl"), "--results", str(out)])
    assert code == 0
    written = json.loads(out.read_text())
    assert written["commit"] == "b" * 40 and written["dirty"] is False
    split = pin.split
    assert written["splits"][split]["TRL004"]["per-rank-value"]["real"] == 1
