"""Decide which finding kinds are on by default, from the benchmark's result file, and write what follows.

    python scripts/graduate.py [--results FILE] [--check]

Reads the result file (``benchmarks/precision/results.json``: ``benchmarks/precision/run.py
--results`` and ``benchmarks/recall/run.py --results`` write it; ``benchmarks/precision/results.py``
describes it) and decides, for every kind of every rule, on the test split. A kind is **stable** when

(a) its strict precision is at least 90 % over at least 20 findings, or
(b) it made fewer than 20 findings on at least 300 test projects, none wrong, at most one
    debatable, and a runtime proof that shows its failure (``tests/runtime/test_<folder>.py``, whose
    scenarios make a finding of that kind: ``runtime_proven_kinds``): the issue's
    bar for a kind whose bug is rare, whose evidence is that it did not cry wolf on 300 projects
    nobody tuned it to (a kind with no finding there passes it; its recall is measured apart);

and in both cases none of its findings is unlabelled and no safe fix of its findings is labelled
broken (``benchmarks/precision/fix_audit.jsonl``). A kind declared ``unproven`` never graduates,
and a result file of a partial run (``--packages``, ``--split dev``) graduates nothing.

It writes each rule folder's ``graduation.toml`` (the stable kinds), README.md's rule table and
the per-kind table of benchmarks/README.md (each between ``<!-- rules-table:start -->`` and
``<!-- rules-table:end -->``). No other file repeats these figures. ``--check`` writes nothing
and exits 1 when any of those files differs from what it would write (CI runs it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "precision" / "results.json"
GRADUATION_FILE = "graduation.toml"
START, END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"

SPLIT = "test"
MIN_PRECISION = 0.9  # (a): strict precision at least this ...
MIN_FINDINGS = 20  # ... over at least this many findings
MIN_PROJECTS = 300  # (b): fewer findings, on at least this many test projects
MAX_DEBATABLE = 1  # (b): at most this many debatable findings


@dataclass(frozen=True)
class KindInfo:
    name: str
    description: str
    unproven: bool


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    folder: Path
    kinds: tuple[KindInfo, ...]


@dataclass(frozen=True)
class Decision:
    stable: bool
    why: str  # the branch of the bar it meets, or the first part of the bar it misses


def shipped_rules() -> list[RuleInfo]:
    """Every rule of the pack with its declared kinds, in code order."""
    from trllint.rule.registry import all_rules

    return [
        RuleInfo(code, info.rule.name, info.folder,
                 tuple(KindInfo(name, kind.description, kind.unproven) for name, kind in info.rule.kinds.items()))
        for code, info in all_rules().items()
    ]


def has_runtime_proof(rule: RuleInfo, root: Path) -> bool:
    return (root / "tests" / "runtime" / f"test_{rule.folder.name}.py").is_file()


def runtime_proven_kinds(rule: RuleInfo) -> frozenset[str] | None:
    """The kinds whose failure the rule's runtime proof shows: those of the findings its scenarios
    (``scenario*.py`` in its folder, the scripts its runtime test launches) make. None where the
    scenarios make no finding (a rule whose runtime test does not launch a linted script): then
    the runtime test stands for the whole rule."""
    scenarios = sorted(str(path) for path in rule.folder.glob("scenario*.py"))
    if not scenarios:
        return None
    linted = subprocess.run(
        [sys.executable, "-m", "trllint", "--preview", "--no-cache", "--isolated", "--format", "json",
         "--select", rule.code, *scenarios], capture_output=True, text=True, check=False,
    )
    kinds = frozenset(finding.get("kind", "") for finding in json.loads(linted.stdout or "[]")) - {""}
    return kinds or None


def decide(numbers: Mapping[str, object] | None, *, projects: int, unproven: bool, runtime_proof: bool) -> Decision:
    """The bar (the module's docstring) for one kind's numbers on the test split (None: no finding)."""
    count = dict(numbers or {})
    findings, real, wrong, debatable, unlabelled, broken = (
        int(count.get(column, 0) or 0)  # type: ignore[call-overload]
        for column in ("findings", "real", "wrong", "debatable", "unlabelled", "broken_safe_fixes")
    )
    if unproven:
        return Decision(False, "unproven: rests on what the code does not show")
    if unlabelled:
        return Decision(False, f"{unlabelled} unlabelled")
    if broken:
        return Decision(False, f"{broken} safe fix{'es' if broken > 1 else ''} labelled broken")
    if findings >= MIN_FINDINGS:
        if real / findings >= MIN_PRECISION:
            return Decision(True, f"(a) at least {100 * MIN_PRECISION:.0f} % over at least {MIN_FINDINGS} findings")
        return Decision(False, f"strict precision {100 * real // findings} % < {100 * MIN_PRECISION:.0f} %")
    if projects < MIN_PROJECTS:
        return Decision(False, f"fewer than {MIN_FINDINGS} findings on {projects} test projects (< {MIN_PROJECTS})")
    if wrong:
        return Decision(False, f"{wrong} wrong")
    if debatable > MAX_DEBATABLE:
        return Decision(False, f"{debatable} debatable (> {MAX_DEBATABLE})")
    if not runtime_proof:
        return Decision(False, "no runtime proof")
    return Decision(True, f"(b) fewer than {MIN_FINDINGS} findings on {projects} test projects, none wrong")


def _numbers(document: Mapping, split: str, code: str, kind: str) -> Mapping[str, object] | None:
    return document.get("splits", {}).get(split, {}).get(code, {}).get(kind)


def partial_run(document: Mapping) -> str:
    """What made the run cover less than the whole test split (``--packages``, ``--split dev``); empty when nothing did."""
    selection = document.get("selection") or {}
    if selection.get("packages"):
        return f"a run of some projects only (--packages {selection['packages']})"
    if selection.get("split") == "dev":
        return "a run of the dev split only"
    return ""


def decisions(document: Mapping, rules: list[RuleInfo], root: Path) -> dict[tuple[str, str], Decision]:
    partial = partial_run(document)
    if partial:  # the bar is met on the whole test split or not at all
        return {(rule.code, kind.name): Decision(False, partial) for rule in rules for kind in rule.kinds}
    projects = int(document.get("projects", {}).get(SPLIT, 0))
    chosen = {}
    for rule in rules:
        proven = runtime_proven_kinds(rule)
        for kind in rule.kinds:
            runtime_proof = has_runtime_proof(rule, root) and (proven is None or kind.name in proven)
            chosen[(rule.code, kind.name)] = decide(
                _numbers(document, SPLIT, rule.code, kind.name), projects=projects, unproven=kind.unproven,
                runtime_proof=runtime_proof,
            )
    return chosen


def undeclared(document: Mapping, rules: list[RuleInfo]) -> list[str]:
    """The ``code/kind`` pairs of the result file that no rule declares (a renamed kind, a stale file)."""
    declared = {(rule.code, kind.name) for rule in rules for kind in rule.kinds}
    return sorted({f"{code}/{kind}" for split in document.get("splits", {}).values() for code, kinds in split.items()
                   for kind in kinds if (code, kind) not in declared})


# --- the generated text ---------------------------------------------------------------------------


def _source(document: Mapping, results: Path, root: Path, quote: str = "`") -> str:
    """Where the numbers come from: the result file, its commit and date, and what makes it partial."""
    where = results.relative_to(root).as_posix() if results.is_relative_to(root) else results.name
    commit = str(document.get("commit", "unknown"))[:12]
    line = f"{quote}{where}{quote} at {quote}{commit}{quote} ({document.get('date', 'no date')})"
    if document.get("dirty"):
        line += ", run with uncommitted changes"
    selection = document.get("selection") or {}
    if selection.get("packages"):
        line += f", only {quote}--packages {selection['packages']}{quote}"
    return line


def _precision(numbers: Mapping[str, object] | None) -> str:
    if not numbers or not numbers.get("findings"):
        return "-"
    # Rounded down, in whole numbers: a kind just under the bar never reads as at it.
    return f"{100 * int(numbers['real']) // int(numbers['findings'])} %"  # type: ignore[call-overload]


def _get(numbers: Mapping[str, object] | None, column: str) -> object:
    return (numbers or {}).get(column, 0)


def graduation_toml(rule: RuleInfo, chosen: Mapping[tuple[str, str], Decision], source: str) -> str:
    stable = [kind.name for kind in rule.kinds if chosen[(rule.code, kind.name)].stable]
    return (f"# Generated by scripts/graduate.py from {source}; do not edit.\n"
            "# The kinds of this rule's findings that are on by default (README.md, Rules).\n"
            f"stable = [{', '.join(json.dumps(name) for name in stable)}]\n")


def readme_table(document: Mapping, rules: list[RuleInfo], chosen: Mapping[tuple[str, str], Decision], source: str) -> str:
    """The default selection: each stable kind with its test-split numbers; a rule with none says so."""
    rows = ["| code | name | kind on by default | test findings | real | strict precision |", "|---|---|---|---|---|---|"]
    preview = 0
    for rule in rules:
        stable = [kind.name for kind in rule.kinds if chosen[(rule.code, kind.name)].stable]
        preview += len(rule.kinds) - len(stable)
        if not stable:
            rows.append(f"| {rule.code} | {rule.name} | none: preview only | | | |")
        for name in stable:
            numbers = _numbers(document, SPLIT, rule.code, name)
            rows.append(f"| {rule.code} | {rule.name} | `{name}` | {_get(numbers, 'findings')} "
                        f"| {_get(numbers, 'real')} | {_precision(numbers)} |")
    projects = document.get("projects", {}).get(SPLIT, 0)
    return "\n".join(rows) + (
        f"\n\nThe test split of {projects} projects, from {source}. The {preview} preview kinds (`--preview`), "
        "who labelled the findings, and the bar each kind meets or misses: [benchmarks/README.md](benchmarks/README.md)."
    )


def benchmarks_table(document: Mapping, rules: list[RuleInfo], chosen: Mapping[tuple[str, str], Decision], source: str) -> str:
    projects = document.get("projects", {})
    head = (f"From {source}: {projects.get('test', 0)} test projects, {projects.get('dev', 0)} dev projects. "
            "Strict precision is real / findings; a safe fix counts broken when its audit says anything but correct.")
    rows = ["| rule | kind | status | test findings | real | wrong | debatable | unlabelled | strict precision "
            "| broken safe fixes | labellers | dev findings / real | bar |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for rule in rules:
        for kind in rule.kinds:
            test = _numbers(document, SPLIT, rule.code, kind.name)
            dev = _numbers(document, "dev", rule.code, kind.name)
            decision = chosen[(rule.code, kind.name)]
            labellers = ", ".join(str(name) for name in (test or {}).get("labellers", [])) or "-"  # type: ignore[attr-defined]
            cells = [str(_get(test, column)) for column in ("findings", "real", "wrong", "debatable", "unlabelled")]
            rows.append(f"| {rule.code} | `{kind.name}` | {'stable' if decision.stable else 'preview'} | "
                        + " | ".join(cells)
                        + f" | {_precision(test)} | {_get(test, 'broken_safe_fixes')} | {labellers} "
                        f"| {_get(dev, 'findings')} / {_get(dev, 'real')} | {decision.why} |")
    parts = [head, "\n".join(rows)]
    recall = document.get("recall")
    if recall:
        recall_rows = ["| rule | pairs | caught with `--preview` | caught by default | not evaluated |",
                       "|---|---|---|---|---|"]
        for code, entry in sorted(recall.get("rules", {}).items()):
            recall_rows.append(f"| {code} | {entry.get('pairs', 0)} | {entry.get('caught_preview', 0)} "
                               f"| {entry.get('caught_default', 0)} | {entry.get('errors', 0)} |")
        # Written before the method was recorded: each file was linted alone.
        method = recall.get("method", "alone")
        parts.append(f"Recall on the bug-fix pairs (`recall/run.py`, each file linted {method}), at "
                     f"`{str(recall.get('commit', 'unknown'))[:12]}` ({recall.get('date', 'no date')}):\n\n"
                     + "\n".join(recall_rows))
    return "\n\n".join(parts)


def between_markers(text: str, table: str, path: Path) -> str:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"graduate: {path} has no {START} ... {END} markers")
    return (text[: start + len(START)] + "\n<!-- generated by scripts/graduate.py: do not edit -->\n"
            + table + "\n" + text[end:])


def generated_files(document: Mapping, results: Path, root: Path, rules: list[RuleInfo]) -> dict[Path, str]:
    """Every file the result file decides, with the text it should have."""
    chosen = decisions(document, rules, root)
    source = _source(document, results, root)
    plain = _source(document, results, root, quote="")
    files = {rule.folder / GRADUATION_FILE: graduation_toml(rule, chosen, plain) for rule in rules}
    for path, table in ((root / "README.md", readme_table(document, rules, chosen, source)),
                        (root / "benchmarks" / "README.md", benchmarks_table(document, rules, chosen, source))):
        files[path] = between_markers(path.read_text(encoding="utf-8"), table, path)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the result file (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a generated file differs")
    args = parser.parse_args(argv)
    try:
        document = json.loads(args.results.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        sys.stderr.write(f"graduate: cannot read the result file {args.results}: {exc}\n")
        return 2
    rules = shipped_rules()
    elsewhere = [rule.code for rule in rules if not rule.folder.resolve().is_relative_to(REPO)]
    if elsewhere:  # an interpreter whose editable trllint is another checkout
        sys.stderr.write(f"graduate: the rule pack this interpreter imports is not this checkout's ({', '.join(elsewhere)})\n")
        return 2
    for name in undeclared(document, rules):
        sys.stderr.write(f"graduate: the result file has findings of {name}, a kind no rule declares\n")
    stale = []
    for path, text in generated_files(document, args.results.resolve(), REPO, rules).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            sys.stdout.write(f"wrote {path.relative_to(REPO)}\n")
    if args.check and stale:
        for path in stale:
            sys.stdout.write(f"differs from {args.results.name}: {path.relative_to(REPO)} (run scripts/graduate.py)\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
