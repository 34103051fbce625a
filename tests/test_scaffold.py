"""scripts/add_rule.py creates a complete rule in the shape the shipped rules have: in a copy of
the checkout, the rule-case harness passes on the generated rule and its cases, the completeness
checker names only the placeholders left to write, and the runtime test fails (not skips) until
it is written."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_rule_completeness import missing_parts

REPO = Path(__file__).resolve().parents[1]
CODE, NAME, FOLDER = "TRL099", "scaffold-trial", "trl099_scaffold_trial"

# Runs the harness with the copy's rules/ as the rule pack, mounted as trllint.rules the way
# trllint/rule/registry.py mounts the rules of a checkout that is not installed.
HARNESS = """
import importlib.util, sys
import pytest
spec = importlib.util.spec_from_file_location(
    "trllint.rules", "rules/__init__.py", submodule_search_locations=["rules"])
pack = importlib.util.module_from_spec(spec)
sys.modules["trllint.rules"] = pack
spec.loader.exec_module(pack)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/test_rule_cases.py", "-k", sys.argv[1]]))
"""


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
    shutil.copy(REPO / "tests" / "test_rule_cases.py", root / "tests" / "test_rule_cases.py")
    return root


def test_scaffolded_rule_passes_the_case_harness(checkout: Path):
    written = add_rule.add_rule(CODE, NAME, checkout)
    folder = checkout / "rules" / FOLDER
    assert folder / "rule.py" in written and checkout / "README.md" in written
    result = subprocess.run(
        [sys.executable, "-c", HARNESS, CODE], cwd=checkout, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    # The bad case's findings (one safe fix, one unsafe), the good case's silence, the fix and the
    # snapshot: the four tests the harness runs for a rule of one bad and one good case.
    assert "4 passed" in result.stdout and "failed" not in result.stdout, result.stdout[-4000:]


def test_scaffolded_rule_has_the_shape_of_the_shipped_rules(checkout: Path):
    add_rule.add_rule(CODE, NAME, checkout)
    folder = checkout / "rules" / FOLDER
    text = (folder / "rule.py").read_text(encoding="utf-8")
    assert "def check_module(self, model: SemanticModel)" in text and "calls_in(model)" in text
    assert "visit_" not in text and "class Unsafe(ReasonKind)" in text
    snapshot = (folder / "cases" / "findings.snap").read_text(encoding="utf-8")
    assert "[safe fix]" in snapshot and "[unsafe fix: " in snapshot
    readme = (checkout / "README.md").read_text(encoding="utf-8")
    assert f"| [{CODE}](rules/{FOLDER}/README.md) | {NAME} | TODO: what it finds" in readme
    # Complete but for the placeholders the newcomer must write (and the runtime test, which fails).
    assert missing_parts(folder, CODE, "always", runtime_tests=checkout / "tests" / "runtime",
                         project_readme=readme) == [
        f"{CODE} ({FOLDER}): README.md still has TODO placeholders (scripts/add_rule.py left them to fill in)",
        f"{CODE} ({FOLDER}): scenario.py is still the scaffold's placeholder (TODO)",
    ]


def test_runtime_test_stub_fails_until_written(checkout: Path):
    add_rule.add_rule(CODE, NAME, checkout)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "runtime",
         f"tests/runtime/test_{FOLDER}.py"],
        cwd=checkout, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "skipped" not in result.stdout, result.stdout
    assert "runtime proof is not written yet" in result.stdout


def test_scaffold_refuses_a_taken_code_and_a_bad_name(checkout: Path):
    with pytest.raises(add_rule.ScaffoldError, match="TRL002 exists already"):
        add_rule.add_rule("TRL002", "anything", checkout)
    with pytest.raises(add_rule.ScaffoldError, match="lower-case words"):
        add_rule.add_rule(CODE, "Bad_Name", checkout)
    assert add_rule.main(["TRL99", "x", "--root", str(checkout)]) == 2
    assert not list((checkout / "rules").glob("trl099*"))


def test_the_guide_teaches_the_rule_the_scaffold_writes(tmp_path: Path):
    # docs/adding-a-rule.md shows the generated rule class; every line it shows is in what the
    # scaffold writes (end-of-line comments aside), in the same order, so the two cannot drift apart.
    guide = (REPO / "docs" / "adding-a-rule.md").read_text(encoding="utf-8")
    shown = guide.split("## The rule class", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    (tmp_path / "rules").mkdir()
    add_rule.add_rule("TRL011", "my-rule-name", tmp_path)
    written = iter((tmp_path / "rules" / "trl011_my_rule_name" / "rule.py").read_text(encoding="utf-8").splitlines())
    for line in filter(str.strip, shown.splitlines()):
        assert any(line == candidate.split("  # ")[0] for candidate in written), f"the scaffold does not write: {line!r}"
