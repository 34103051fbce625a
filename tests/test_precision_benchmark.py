"""The precision benchmark's matching and report (benchmarks/precision/run.py), without downloads."""

from __future__ import annotations

import importlib.util
import json
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
