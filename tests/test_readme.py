"""The README's quickstart is what CI runs, it names only things that exist, and the docs stay reference-sized."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def quickstart_commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_quickstart_has_exactly_two_commands_and_ci_runs_the_second():
    commands = quickstart_commands()
    assert len(commands) == 2
    assert "examples/" in commands[0] and "pytest" in commands[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), ".ci/run must run the README's test command verbatim"
    # The unit tests' default run leaves the runtime tests out (pyproject addopts): the README's
    # command runs them as a step of its own.
    assert commands[1].endswith(".venv/bin/python -m pytest -m runtime")


def test_rule_table_links_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)#]+)\)", readme):
        if not link.startswith("http"):
            assert (REPO / link).exists(), f"README links to missing {link}"


def test_the_pre_commit_snippet_names_a_rev_this_repository_has():
    # `rev: v0.1.0`, a tag that never existed, made pre-commit fail on a fresh clone.
    import subprocess

    import pytest

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("### pre-commit", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    rev = re.search(r"^\s*rev:\s*(\S+)", snippet, re.MULTILINE).group(1)
    hooks = re.findall(r"^\s*- id:\s*(\S+)", snippet, re.MULTILINE)
    declared = re.findall(r"^- id:\s*(\S+)", (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"), re.MULTILINE)
    assert hooks and set(hooks) <= set(declared)
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)"], cwd=REPO, capture_output=True, text=True).stdout.split()
    if not refs:
        pytest.skip("this checkout has no branch or tag to check the rev against")
    resolves = [
        subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True).returncode == 0
        for ref in (rev, f"origin/{rev}", f"refs/tags/{rev}")
    ]
    assert any(resolves), f"the README's pre-commit snippet pins rev {rev!r}, which this repository does not have"


def test_the_docs_stay_reference_sized():
    # A reader finds the answer in pages of these sizes; history lives in git, not in the docs.
    # The rule table scripts/graduate.py generates (a row per rule and kind) is not counted.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = readme.index("<!-- rules-table:start -->"), readme.index("<!-- rules-table:end -->")
    assert len((readme[:start] + readme[end:]).splitlines()) <= 250
    for page in sorted((REPO / "rules").glob("*/README.md")):
        assert len(page.read_text(encoding="utf-8").splitlines()) <= 125, page.parent.name
    assert len((REPO / "docs" / "adding-a-rule.md").read_text(encoding="utf-8").split()) <= 1250
