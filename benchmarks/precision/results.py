"""The benchmark's result file: one JSON file that holds a precision run's numbers per split, rule
and finding kind, and the recall run's numbers per rule, for ``scripts/graduate.py`` to read.

    {"format": 1, "date": "YYYY-MM-DD", "commit": "<git rev-parse HEAD>", "dirty": false,
     "selection": {"split": "all", "packages": null},
     "projects": {"dev": 19, "test": 300},
     "splits": {"test": {"TRL001": {"step-model": {"findings": 3, "real": 3, "wrong": 0,
                "debatable": 0, "unlabelled": 0, "strict_precision": 1.0,
                "labellers": ["helper-..."], "broken_safe_fixes": 0}}}},
     "recall": {"date": ..., "commit": ..., "dirty": ..., "method": "in its project",
                "rules": {"TRL001": {"pairs": 5,
                "caught_preview": 4, "caught_default": 2, "errors": 0}}}}

``precision/run.py --results FILE`` writes everything but ``recall`` and keeps the ``recall`` an
earlier run left there; ``recall/run.py --results FILE`` writes only ``recall``. Kept apart from
``run.py`` so that both scripts and the tests load it alone; no I/O beyond the result file and git.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping

FORMAT = 1
VERDICT_COLUMNS = ("findings", "real", "wrong", "debatable", "unlabelled")
NO_KIND = "(none)"  # a finding of a rule that declares no kinds
NO_LABELLER = "(unnamed)"  # a label written before labels named their labeller
CORRECT_FIX = "correct"

Key = tuple[str, str, str, int, str]  # (package, version, path, line, code), as run.py matches


def checkout_state(repo: Path) -> tuple[str, bool]:
    """The checkout's commit and whether its tracked files differ from it."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                             capture_output=True, text=True).stdout.strip()
    return commit or "unknown", bool(changed)


def read_fix_audit(path: Path) -> dict[Key, list[str]]:
    """The verdicts of ``fix_audit.jsonl`` by the key of the finding whose fix was audited."""
    verdicts: dict[Key, list[str]] = {}
    if not path.is_file():
        return verdicts
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        audit = json.loads(line)
        if "verdict" not in audit:
            raise SystemExit(f"{path.name}:{number}: an audit needs a verdict")
        key = (audit["package"], audit["version"], audit["path"], int(audit["line"]), audit["code"])
        verdicts.setdefault(key, []).append(audit["verdict"])
    return verdicts


def kind_counts(
    findings: Iterable[Key], kinds: Mapping[Key, str], labels: Mapping[Key, dict], audits: Mapping[Key, list[str]]
) -> dict[str, dict[str, dict]]:
    """Per rule and kind: the verdict counts, strict precision, labellers and safe fixes labelled broken."""
    counts: dict[tuple[str, str], Counter] = {}
    labellers: dict[tuple[str, str], set[str]] = {}
    for key in sorted(set(findings)):
        where = (key[4], kinds.get(key) or NO_KIND)
        tally = counts.setdefault(where, Counter())
        names = labellers.setdefault(where, set())
        tally["findings"] += 1
        label = labels.get(key)
        if label is None:
            tally["unlabelled"] += 1
        else:
            tally[label["verdict"]] += 1
            names.add(str(label.get("labeller") or NO_LABELLER))
        tally["broken_safe_fixes"] += sum(verdict != CORRECT_FIX for verdict in audits.get(key, ()))
    result: dict[str, dict[str, dict]] = {}
    for (code, kind), tally in sorted(counts.items()):
        entry: dict = {column: tally[column] for column in VERDICT_COLUMNS}
        entry["strict_precision"] = round(tally["real"] / tally["findings"], 4)
        entry["labellers"] = sorted(labellers[(code, kind)])
        entry["broken_safe_fixes"] = tally["broken_safe_fixes"]
        result.setdefault(code, {})[kind] = entry
    return result


def precision_document(
    *, linted_at: tuple[str, bool], projects: Mapping[str, int], splits: Mapping[str, dict],
    selection: Mapping[str, object], today: datetime.date | None = None,
) -> dict:
    """``linted_at``: the commit of the code that linted, and whether its tracked files differed."""
    commit, dirty = linted_at
    return {
        "format": FORMAT,
        "date": (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat(),
        "commit": commit,
        "dirty": dirty,
        "selection": dict(selection),
        "projects": dict(projects),
        "splits": dict(splits),
    }


def write_results(path: Path, update: Mapping[str, object], keep: Iterable[str]) -> None:
    """Write ``update`` to the result file at ``path``, keeping the ``keep`` keys an earlier run left there."""
    document: dict = {}
    if path.is_file():
        earlier = json.loads(path.read_text(encoding="utf-8"))
        document = {key: earlier[key] for key in keep if key in earlier}
    document.update(update)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def kind_table(per_rule: Mapping[str, Mapping[str, dict]]) -> str:
    """One row per rule and kind that has findings."""
    rows = ["| rule | kind | findings | real | wrong | debatable | unlabelled | strict precision | broken safe fixes "
            "| labellers |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for code in sorted(per_rule):
        for kind, entry in sorted(per_rule[code].items()):
            cells = [str(entry[column]) for column in VERDICT_COLUMNS]
            rows.append(f"| {code} | {kind} | " + " | ".join(cells)
                        + f" | {100 * entry['strict_precision']:.0f} % | {entry['broken_safe_fixes']} | "
                        + ", ".join(entry["labellers"]) + " |")
    return "\n".join(rows)
