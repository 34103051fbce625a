"""scripts/add_rule.py creates a complete rule: the completeness checker finds nothing missing,
the generated cases pass, and the runtime test stub fails (not skips) until it is written."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_rule_cases import SNAPSHOT, Case, expected_findings, lint_case, render_snapshot
from tests.test_rule_completeness import missing_parts
from trllint.engine.fix_loop import fix_source
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

REPO = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


add_rule = _load(REPO / "scripts" / "add_rule.py", "add_rule_script")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "rules", root / "rules", ignore=ignore)
    shutil.copytree(REPO / "tests" / "runtime", root / "tests" / "runtime", ignore=ignore)
    (root / "tests" / "__init__.py").write_text("")
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(REPO / name, root / name)
    return root


def test_scaffolded_rule_is_complete_and_its_cases_pass(checkout: Path):
    written = add_rule.add_rule("TRL099", "scaffold-trial", checkout)
    folder = checkout / "rules" / "trl099_scaffold_trial"
    assert folder / "rule.py" in written and checkout / "README.md" in written
    readme = (checkout / "README.md").read_text(encoding="utf-8")
    # Complete but for the placeholders the newcomer must write (and the runtime test, which fails).
    missing = missing_parts(folder, "TRL099", "always", runtime_tests=checkout / "tests" / "runtime",
                            project_readme=readme)
    assert missing == [
        "TRL099 (trl099_scaffold_trial): README.md still has TODO placeholders (scripts/add_rule.py left them to fill in)",
        "TRL099 (trl099_scaffold_trial): scenario.py is still the scaffold's placeholder (TODO)",
    ]

    rule = _load(folder / "rule.py", "scaffolded_rule").ScaffoldTrial
    assert (rule.code, rule.name, rule.fixable) == ("TRL099", "scaffold-trial", "always")
    ruleset = RuleSet([rule])
    bad = (folder / "cases" / "bad_example.py").read_text()
    found = lint_source(SourceFile(text=bad, display_path="bad_example.py"), "bad_example.py", ruleset)
    assert {(f.line, f.code) for f in found} == expected_findings(bad) != set()
    fixed = fix_source(SourceFile(text=bad, display_path="bad_example.py"), "bad_example.py", ruleset, unsafe=True)
    assert fixed.text == (folder / "cases" / "bad_example.fixed.py").read_text()
    good = (folder / "cases" / "good_example.py").read_text()
    assert lint_source(SourceFile(text=good, display_path="good_example.py"), "good_example.py", ruleset) == []
    cases = [Case("TRL099", folder / "cases" / name) for name in ("bad_example.py", "good_example.py")]
    snapshot = (folder / "cases" / SNAPSHOT).read_text(encoding="utf-8")
    assert snapshot == render_snapshot(cases, lambda case: lint_case(case, rule))


def test_runtime_test_stub_fails_until_written(checkout: Path):
    add_rule.add_rule("TRL099", "scaffold-trial", checkout)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "runtime",
         "tests/runtime/test_trl099_scaffold_trial.py"],
        cwd=checkout, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "skipped" not in result.stdout, result.stdout
    assert "runtime proof is not written yet" in result.stdout


def test_scaffold_refuses_a_taken_code_and_a_bad_name(checkout: Path):
    with pytest.raises(add_rule.ScaffoldError, match="TRL002 exists already"):
        add_rule.add_rule("TRL002", "anything", checkout)
    with pytest.raises(add_rule.ScaffoldError, match="lower-case words"):
        add_rule.add_rule("TRL099", "Bad_Name", checkout)
    assert add_rule.main(["TRL99", "x", "--root", str(checkout)]) == 2
    assert not list((checkout / "rules").glob("trl099*"))
