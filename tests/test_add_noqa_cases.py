"""``--add-noqa`` on every bad rule case (Python, TOML, setup.cfg, requirements files): afterwards
nothing is reported but what it named, the file still parses, and a second pass adds nothing."""

from __future__ import annotations

import libcst as cst
import pytest

from tests.test_rule_cases import CASES, _ruleset, _source
from trllint.engine.noqa import NoqaOutcome, check_silenced, with_noqa_comments
from trllint.engine.fix_loop import still_valid
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile
from trllint.rule.base import Rule
from trllint.rule.ruleset import RuleSet


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "bad"], ids=str)
def test_add_noqa_silences_each_case(case):
    text = case.path.read_text(encoding="utf-8")
    source, ruleset = _source(case, text), _ruleset(case, text)
    findings = lint_source(source, case.linted_as, ruleset)
    outcome = NoqaOutcome()
    new_text = with_noqa_comments(source, findings, outcome)
    check_silenced(source, new_text, case.linted_as, ruleset, outcome)

    assert still_valid(source, new_text, case.linted_as) is None
    if case.linted_as.endswith(".py"):
        compile(new_text, case.path.name, "exec")
    skipped = {(f.line, f.code) for f, _ in outcome.skipped}
    remaining = {(f.line, f.code) for f in lint_source(source.with_text(new_text), case.linted_as, ruleset)}
    assert remaining == skipped
    assert outcome.added == len({(f.line, f.code) for f in findings if not f.internal} - skipped)
    # Only comments were added: every original line is still there, at its start.
    assert all(new.startswith(old.rstrip()) for old, new in zip(text.splitlines(), new_text.splitlines()))

    again = NoqaOutcome()
    assert with_noqa_comments(source.with_text(new_text), lint_source(source.with_text(new_text), case.linted_as, ruleset), again) == new_text
    assert again.added == 0


class PrintCall(Rule):
    """``print(...)``: a stand-in rule, so that the comment handling is tested apart from any rule."""

    code = "TST992"
    name = "print-call"
    message = "print() call"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            self.report(node)


@pytest.mark.parametrize(
    ("line", "written"),
    [
        # Two `# noqa` in one comment: the engine reads the last, so the code joins that one.
        ("print(1)  # noqa: E501  # noqa: F401\n", "print(1)  # noqa: E501  # noqa: F401, TST992\n"),
        ("print(1)  # type: ignore  # noqa: E501\n", "print(1)  # type: ignore  # noqa: E501, TST992\n"),
        ("print('# noqa: E501')\n", "print('# noqa: E501')  # noqa: TST992\n"),  # text in a string is no comment
    ],
)
def test_add_noqa_merges_into_the_comment_the_engine_reads(line, written):
    source, ruleset = SourceFile(line, "a.py"), RuleSet([PrintCall])
    outcome = NoqaOutcome()
    new_text = with_noqa_comments(source, lint_source(source, "a.py", ruleset), outcome)
    check_silenced(source, new_text, "a.py", ruleset, outcome)
    assert new_text == written
    assert outcome.added == 1 and outcome.skipped == []
