"""One harness for every rule's cases, no opt-out (as Ruff's).

The case-file format (``bad_``/``good_``/``.fixed.`` names, ``# expect:``, the ``__`` suffix,
``# trllint-settings:``) is described in docs/adding-a-rule.md, section "Cases".

``# expect:`` comments hold each finding's line and code; each rule's ``cases/findings.snap``
holds all of its findings as ``case:line:column: CODE message [fix]``, so that a column or a
message that changes fails too. Write the snapshots with
``TRLLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_cases.py`` and review
them with ``git diff``.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from trllint.core.findings import Finding
from trllint.engine.fix_loop import fix_source, still_valid
from trllint.rule.base import Rule
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")
_SETTINGS = re.compile(r"#\s*trllint-settings:\s*(?P<json>\{.*\})")


@dataclass(frozen=True)
class Case:
    code: str
    path: Path
    # A case that is a project of several modules (``cases/bad_<name>/``, with its own
    # pyproject.toml): each of its Python files is a case, linted as a file of that project.
    project: Path | None = None

    @property
    def kind(self) -> str:
        return "bad" if (self.project or self.path).name.startswith("bad_") else "good"

    @property
    def linted_as(self) -> str:
        if self.project is not None:
            return self.path.name
        name = self.path.name.split("_", 1)[1]
        return name.split("__", 1)[1] if "__" in name else name

    @property
    def cases_folder(self) -> Path:
        return (self.project or self.path).parent

    @property
    def fixed_path(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.fixed{self.path.suffix}")

    def __str__(self) -> str:
        if self.project is not None:
            return f"{self.code}/{self.project.name}/{self.path.relative_to(self.project)}"
        return f"{self.code}/{self.path.name}"


def _cases() -> list[Case]:
    cases = []
    for code, info in all_rules().items():
        folder = info.folder / "cases"
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path.name.startswith(("bad_", "good_")) and ".fixed." not in path.name and path.is_file():
                cases.append(Case(code, path))
            elif path.name.startswith(("bad_", "good_")) and path.is_dir():
                assert (path / "pyproject.toml").is_file(), f"{path}: a project case has its own pyproject.toml"
                cases.extend(
                    Case(code, module, path) for module in sorted(path.rglob("*.py")) if ".fixed." not in module.name
                )
    return cases


CASES = _cases()


def _ruleset(case: Case, text: str, rule: type[Rule] | None = None) -> RuleSet:
    settings = {}
    match = _SETTINGS.search(text)
    if match:
        settings = json.loads(match.group("json"))
    # Preview on: the cases prove a rule's preview findings too; the snapshot marks them [preview].
    return RuleSet([rule or all_rules()[case.code].rule], settings, preview=True)


def _source(case: Case, text: str) -> SourceFile:
    # Only a project case is a file of a project: a one-file case must not read its neighbours.
    return SourceFile(
        text=text,
        display_path=case.path.name,
        is_python=case.linted_as.endswith(".py"),
        path=case.path if case.project is not None else None,
    )


def lint_case(case: Case, rule: type[Rule] | None = None) -> list[Finding]:
    """The findings of ``case`` under its rule (or ``rule``, for the harness's own tests)."""
    text = case.path.read_text(encoding="utf-8")
    return lint_source(_source(case, text), case.linted_as, _ruleset(case, text, rule))


# The snapshot test and the per-case test lint the same cases: once per process.
_case_findings = functools.cache(lint_case)


def expected_findings(text: str) -> set[tuple[int, str]]:
    expected = set()
    for index, line in enumerate(text.splitlines()):
        match = _EXPECT.search(line)
        if match:
            for code in match.group("codes").split(","):
                expected.add((index + 2, code.strip()))
    return expected


def test_every_rule_has_cases():
    codes_with_cases = {case.code for case in CASES}
    for code in all_rules():
        assert code in codes_with_cases, f"{code} has no cases"
        assert {c.kind for c in CASES if c.code == code} == {"bad", "good"}, f"{code} needs bad and good cases"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_case_findings(case: Case):
    text = case.path.read_text(encoding="utf-8")
    findings = _case_findings(case)
    got = {(f.line, f.code) for f in findings}
    if case.kind == "good" or (case.project is not None and not _EXPECT.search(text)):
        # A module of a bad project case without expectations is one the rule must not flag.
        assert case.kind == "bad" or not _EXPECT.search(text), "good cases carry no expectations"
        assert got == set(), f"good case flagged: {[(f.line, f.message) for f in findings]}"
    else:
        expected = expected_findings(text)
        assert expected, "a bad case marks at least one finding with '# expect: CODE'"
        assert got == expected, [(f.line, f.code, f.message) for f in findings]
    rule = all_rules()[case.code].rule
    for finding in findings:
        if rule.fixable == "never":
            assert finding.fix is None, f"{case.code} declares no fix but offered one"
        elif rule.fixable == "always":
            assert finding.fix is not None, f"{case.code} declares a fix always, none at line {finding.line}"
        if finding.fix is not None and finding.fix.applicability == "unsafe":
            assert finding.fix.reason, f"an unsafe fix says why it is unsafe (line {finding.line})"


def test_project_cases_are_projects():
    """Each project case has at least two modules: one is linted, another holds the fact."""
    for project in {case.project for case in CASES if case.project is not None}:
        assert len([c for c in CASES if c.project == project]) >= 2, project


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "bad"], ids=str)
def test_case_fix(case: Case):
    text = case.path.read_text(encoding="utf-8")
    source = _source(case, text)
    ruleset = _ruleset(case, text)
    outcome = fix_source(source, case.linted_as, ruleset, unsafe=True)
    assert not outcome.problems, outcome.problems
    if not outcome.changed:
        assert not case.fixed_path.exists(), f"{case.fixed_path.name} exists but no fix applies"
        return
    assert case.fixed_path.exists(), f"fixes apply but {case.fixed_path.name} is missing"
    assert outcome.text == case.fixed_path.read_text(encoding="utf-8")
    assert still_valid(source, outcome.text, case.linted_as) is None
    if case.linted_as.endswith(".py"):
        compile(outcome.text, case.fixed_path.name, "exec")
    again = fix_source(source.with_text(outcome.text), case.linted_as, ruleset, unsafe=True)
    assert not again.changed, "a second --fix changed the fixed text"
    assert all(f.fix is None for f in again.findings), "fixable findings remain after fixing"


# ---- snapshots: column and message ---------------------------------------------------------

SNAPSHOT = "findings.snap"
UPDATE_SNAPSHOTS = os.environ.get("TRLLINT_UPDATE_SNAPSHOTS") == "1"
_SNAPSHOT_HEADER = (
    "# case:line:column: CODE message [fix] [kind]  (checked by tests/test_rule_cases.py; written by\n"
    "# TRLLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_cases.py)\n"
)


def snapshot_line(case: Case, finding: Finding) -> str:
    fix = finding.fix
    if fix is None:
        shown_fix = ""
    elif fix.applicability == "unsafe":
        shown_fix = f" [unsafe fix: {fix.reason}]"
    else:
        shown_fix = " [safe fix]"
    # One finding, one line, whatever a message holds; its kind (which graduates on its own) is
    # named, a preview finding of a rule without kinds says so, and each fact it stands on follows
    # as ``<- path:line: message``.
    preview = f" [{finding.kind}]" if finding.kind else " [preview]" if finding.preview else ""
    evidence = "".join(f" <- {_evidence_path(case, e.path)}:{e.line}: {e.message}" for e in finding.evidence)
    text = f"{finding.message}{shown_fix}{preview}{evidence}".replace("\n", "\\n")
    return f"{case_name(case)}:{finding.line}:{finding.column}: {finding.code} {text}"


def _evidence_path(case: Case, path: str) -> str:
    """A project file's path as the case's project sees it: the snapshot does not depend on the
    folder the tests run from (findings show paths relative to the working folder)."""
    if case.project is None:
        return path
    try:
        return Path(path).resolve().relative_to(case.project.resolve()).as_posix()
    except ValueError:
        return path


def case_name(case: Case) -> str:
    """The case's path inside its rule's ``cases/`` folder."""
    return case.path.relative_to(case.cases_folder).as_posix()


def render_snapshot(cases: Iterable[Case], findings_of: Callable[[Case], list[Finding]]) -> str:
    lines = [
        snapshot_line(case, finding)
        for case in sorted(cases, key=case_name)
        for finding in sorted(findings_of(case), key=lambda f: (f.line, f.column, f.code, f.message))
    ]
    return _SNAPSHOT_HEADER + "".join(f"{line}\n" for line in lines)


def check_snapshot(path: Path, rendered: str, *, update: bool) -> None:
    """Fail with a diff when ``path`` does not hold ``rendered``; with ``update``, write it."""
    held = path.read_text(encoding="utf-8") if path.is_file() else None
    if held == rendered:
        return
    if update:
        path.write_text(rendered, encoding="utf-8")
        return
    how = "TRLLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_cases.py, then review git diff"
    if held is None:
        pytest.fail(f"{path} is missing; write it with {how}", pytrace=False)
    diff = difflib.unified_diff(
        held.splitlines(keepends=True), rendered.splitlines(keepends=True), f"{path} (snapshot)", "findings now"
    )
    pytest.fail(f"findings differ from {path.name} (- snapshot, + now); if the change is meant, {how}:\n"
                + "".join(diff), pytrace=False)


@pytest.mark.parametrize("code", sorted({case.code for case in CASES}))
def test_findings_snapshot(code: str):
    """Every finding of the rule's cases, column and message included, as its snapshot holds."""
    cases = [case for case in CASES if case.code == code]
    check_snapshot(cases[0].cases_folder / SNAPSHOT, render_snapshot(cases, _case_findings), update=UPDATE_SNAPSHOTS)


def test_snapshot_fails_when_a_message_or_column_changes(tmp_path: Path):
    """The harness itself, on a one-case rule of the engine's test rules (TST001: print -> log)."""
    from tests.engine_rules import PrintCall

    class Reworded(PrintCall):
        message = "print() in training code; call log() instead"

    cases_folder = tmp_path / "tst001_print_call" / "cases"
    cases_folder.mkdir(parents=True)
    case_file = cases_folder / "bad_print.py"
    case_file.write_text("# expect: TST001\nprint(1)\n", encoding="utf-8")
    case = Case("TST001", case_file)
    snapshot = cases_folder / SNAPSHOT

    def rendered(rule: type[Rule]) -> str:
        return render_snapshot([case], lambda c: lint_case(c, rule))

    with pytest.raises(pytest.fail.Exception, match="findings.snap is missing"):
        check_snapshot(snapshot, rendered(PrintCall), update=False)
    check_snapshot(snapshot, rendered(PrintCall), update=True)
    assert snapshot.read_text(encoding="utf-8").splitlines()[-1] == (
        "bad_print.py:2:1: TST001 print() in training code; use log() [safe fix]"
    )
    check_snapshot(snapshot, rendered(PrintCall), update=False)

    with pytest.raises(pytest.fail.Exception) as reworded:
        check_snapshot(snapshot, rendered(Reworded), update=False)
    assert "\n-bad_print.py:2:1: TST001 print() in training code; use log() [safe fix]\n" in str(reworded.value)
    assert "\n+bad_print.py:2:1: TST001 print() in training code; call log() instead [safe fix]\n" in str(reworded.value)

    case_file.write_text("# expect: TST001\nx = print(1)\n", encoding="utf-8")  # same line, column 5
    with pytest.raises(pytest.fail.Exception) as moved:
        check_snapshot(snapshot, rendered(PrintCall), update=False)
    assert "\n+bad_print.py:2:5: TST001 print() in training code; use log() [safe fix]\n" in str(moved.value)
