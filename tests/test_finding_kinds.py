"""Finding kinds: a rule's findings graduate to the default kind by kind, as the rule folder's
graduation.toml lists them; every other kind is preview, and an unproven kind never graduates."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from trllint.core.source import SourceFile
from trllint.engine.lint import lint_source
from trllint.rule.base import FindingKind, Rule
from trllint.rule.graduation import stable_kinds
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet

KINDS = {
    "proven": FindingKind("a print the code shows"),
    "guessed": FindingKind("a print nothing shows", unproven=True),
}


class PrintKinds(Rule):
    """``print(1)`` is a proven finding, ``print(x)`` a guessed one."""

    code = "TST201"
    name = "print-kinds"
    message = "print"
    kinds = KINDS

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            literal = bool(node.args) and isinstance(node.args[0].value, cst.Integer)
            self.report(node, kind="proven" if literal else "guessed")


class NoKindGiven(PrintKinds):
    code = "TST202"

    def visit_Call(self, node: cst.Call) -> None:
        self.report(node)


SOURCE = "print(1)\nprint(x)\n"


def lint(rule: type[Rule], preview: bool) -> list[tuple[int, str, bool]]:
    source = SourceFile(SOURCE, "train.py")
    return [(f.line, f.kind, f.preview) for f in lint_source(source, "train.py", RuleSet([rule], preview=preview))]


def test_a_rule_with_no_graduated_kind_is_preview_and_says_what_stays_preview():
    assert PrintKinds.status == "preview" and PrintKinds.stable_kinds == frozenset()
    assert PrintKinds.preview_findings == "a print nothing shows"  # what stays preview once it graduates
    assert lint(PrintKinds, preview=False) == []
    assert lint(PrintKinds, preview=True) == [(1, "proven", True), (2, "guessed", True)]


def test_a_graduated_kind_is_reported_by_default_and_the_others_only_with_preview(monkeypatch):
    monkeypatch.setattr(PrintKinds, "stable_kinds", frozenset({"proven"}))
    assert lint(PrintKinds, preview=False) == [(1, "proven", False)]
    assert lint(PrintKinds, preview=True) == [(1, "proven", False), (2, "guessed", True)]


def test_a_rule_with_kinds_must_name_one():
    # The engine turns a rule's error into its internal finding (TRL999), naming the cause.
    source = SourceFile(SOURCE, "train.py")
    findings = lint_source(source, "train.py", RuleSet([NoKindGiven], preview=True))
    assert [f.code for f in findings] == ["TRL999"]
    assert "reported kind None" in findings[0].message


def test_graduation_file_lists_stable_kinds(tmp_path: Path):
    assert stable_kinds(tmp_path, "TST201", KINDS) == frozenset()  # no file: nothing graduated
    (tmp_path / "graduation.toml").write_text('stable = ["proven"]\n')
    assert stable_kinds(tmp_path, "TST201", KINDS) == frozenset({"proven"})


@pytest.mark.parametrize(
    "listed, error",
    [('["unheard-of"]', "not one of the rule's kinds"), ('["guessed"]', "does not show"), ('"proven"', "not a list")],
)
def test_graduation_file_refuses_an_unknown_or_unproven_kind(tmp_path: Path, listed: str, error: str):
    (tmp_path / "graduation.toml").write_text(f"stable = {listed}\n")
    with pytest.raises(TypeError, match=error):
        stable_kinds(tmp_path, "TST201", KINDS)


def test_every_shipped_rule_declares_kinds_and_its_graduation_file_is_valid():
    for code, info in all_rules().items():
        rule = info.rule
        assert rule.kinds, f"{code} declares no finding kinds"
        assert rule.stable_kinds <= set(rule.kinds)
        assert rule.status == ("stable" if rule.stable_kinds else "preview")
        assert not any(rule.kinds[kind].unproven for kind in rule.stable_kinds)
