"""TRL000 only for code that no supported Python version accepts.

CPython's compile() knows only the grammar of the interpreter running the tests (3.11 here), so
these files fail it while LibCST, and Python 3.12/3.13, read them: they must not be TRL000, the
rules must still run on them, and their fixes must still be applied.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trllint.engine.fix_loop import fix_source
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source, read_source

REPO = Path(__file__).resolve().parents[1]

NEWER_SYNTAX = {
    "pep695_type_alias": "from typing import Any\n\ntype FeatureDict = dict[str, dict[str, Any]]\n",
    "pep695_generic_function": "def first[T](items: list[T]) -> T:\n    return items[0]\n",
    "pep695_generic_class": "class Buffer[T: (int, float)]:\n    def get(self) -> T: ...\n",
    "pep701_same_quotes": 'names = {"k": 1}\nprint(f"{names["k"]}")\n',
    "pep701_backslash_in_expression": 'parts = ["a", "b"]\nprint(f"{"\\n".join(parts)}")\n',
    "pep696_type_parameter_default": "def pick[T = int](value: T) -> T:\n    return value\n",
}

# TRL002's finding in a file that also uses a 3.12 type alias: the rules must still run.
TRL002_WITH_ALIAS = """\
from accelerate import Accelerator

type Batch = dict[str, list[int]]

accelerator = Accelerator()
reference = accelerator.prepare_model(model, evaluation_mode=True)
"""


def _lint(name: str, text: str, rules: list) -> list:
    source = read_source(text.encode(), name, name)
    # Preview on: a file of no project shows no launch, so TRL002's finding is a preview one.
    return lint_source(source, name, RuleSet(rules, preview=True))


@pytest.mark.parametrize("label", sorted(NEWER_SYNTAX))
@pytest.mark.parametrize("with_rules", [False, True], ids=["no-rule-matches", "rule-pack"])
def test_valid_newer_syntax_is_not_trl000(label: str, with_rules: bool):
    text = NEWER_SYNTAX[label]
    rules = [info.rule for info in all_rules().values()] if with_rules else []
    findings = _lint(f"{label}.py", text, rules)
    assert [f for f in findings if f.code == "TRL000"] == []


def test_the_samples_are_newer_than_some_interpreter():
    # Under 3.11 every sample fails compile(), so the tests above exercise the confirmation;
    # under a newer interpreter they pass through the fast path.
    if sys.version_info < (3, 12):
        for label, text in NEWER_SYNTAX.items():
            with pytest.raises(SyntaxError):
                compile(text, label, "exec")


def test_rules_run_and_fix_on_a_file_with_newer_syntax():
    rule = all_rules()["TRL002"].rule
    findings = _lint("train.py", TRL002_WITH_ALIAS, [rule])
    assert [(f.code, f.line) for f in findings] == [("TRL002", 6)]
    source = read_source(TRL002_WITH_ALIAS.encode(), "train.py", "train.py")
    outcome = fix_source(source, "train.py", RuleSet([rule], preview=True), unsafe=True)
    assert outcome.problems == [], "the fix of a file CPython 3.11 cannot compile was refused"
    assert "type Batch = dict[str, list[int]]" in outcome.text
    assert "evaluation_mode=True, device_placement=True" in outcome.text
    assert outcome.findings == []


@pytest.mark.parametrize(
    "text, line",
    [
        ("def f(:\n    pass\n", 1),
        ("x = 1\n1 = x\n", 2),
        ("type X = int\nprint(f'{x!z}')\n", 2),  # newer grammar does not excuse a real error
    ],
)
@pytest.mark.parametrize("with_rules", [False, True], ids=["no-rule-matches", "rule-pack"])
def test_code_invalid_in_every_version_is_still_trl000(text: str, line: int, with_rules: bool):
    rules = [info.rule for info in all_rules().values()] if with_rules else []
    findings = _lint("broken.py", text, rules)
    assert [f.code for f in findings] == ["TRL000"]
    assert findings[0].message.startswith("syntax error:")


@pytest.mark.parametrize(
    "tail",
    [
        "x = " + "-" * 30000 + "1\n",
        "".join(" " * depth + "if x:\n" for depth in range(150)) + " " * 150 + "pass\n",
    ],
    ids=["prefix-operators", "indentation"],
)
def test_nesting_guard_holds_when_newer_syntax_stops_cpython_early(tmp_path: Path, tail: str):
    # CPython stops at the `type` statement and never sees the nesting below it; LibCST's native
    # parser would overflow the C stack there. In a subprocess: a crash must fail the test, not
    # end the run.
    (tmp_path / "deep.py").write_text("type X = int\n" + tail)
    result = subprocess.run(
        [sys.executable, "-m", "trllint", "--no-cache", "--preview", "--select", "TRL002", "deep.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1, result.stderr
    assert "deep.py:" in result.stdout and "TRL000" in result.stdout, result.stdout + result.stderr
