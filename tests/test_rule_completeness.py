"""Every rule folder is complete: the README promises each rule is proven twice, and the wheel
ships only what is there (docs/adding-a-rule.md lists the parts).

The checker is itself tested on a copy of a real rule folder with one part removed at a time, so
it cannot pass by finding nothing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from trllint.rule.registry import all_rules

REPO = Path(__file__).resolve().parents[1]

# The sections of a rule's README (Ruff's rule docs, STYLE.md), in order.
README_SECTIONS = ("What it finds", "Why it breaks", "Example", "Fixed", "Fix safety", "Runtime proof")


def _sections(readme: str) -> dict[str, str]:
    parts = re.split(r"^## +(.+?)\s*$", readme, flags=re.M)
    return {title: body for title, body in zip(parts[1::2], parts[2::2])}


def missing_parts(folder: Path, code: str, fixable: str, *, runtime_tests: Path, project_readme: str) -> list[str]:
    """What the rule folder lacks, one line each, naming the rule and the part."""
    rule = f"{code} ({folder.name})"
    missing: list[str] = []
    if not (folder / "__init__.py").is_file():
        missing.append(f"{rule}: no __init__.py (without it the folder is left out of the wheel)")
    readme_path = folder / "README.md"
    if not readme_path.is_file():
        missing.append(f"{rule}: no README.md")
    else:
        readme = readme_path.read_text(encoding="utf-8")
        if "TODO" in readme:
            missing.append(f"{rule}: README.md still has TODO placeholders (scripts/add_rule.py left them to fill in)")
        sections = _sections(readme)
        for title in README_SECTIONS:
            body = sections.get(title, "")
            if not body.strip():
                missing.append(f"{rule}: README.md has no '## {title}' section (or it is empty)")
            elif title == "Why it breaks" and "```" not in body:
                missing.append(f"{rule}: README.md '## Why it breaks' quotes no real error text in a ``` block")
            elif title == "Runtime proof" and "pytest" not in body and "accelerate launch" not in body:
                missing.append(f"{rule}: README.md '## Runtime proof' gives no command that shows it")
    cases = folder / "cases"
    names = [p.name for p in cases.iterdir()] if cases.is_dir() else []
    bad = [n for n in names if n.startswith("bad_") and ".fixed." not in n]
    if not bad:
        missing.append(f"{rule}: no bad case (cases/bad_*.py)")
    if not [n for n in names if n.startswith("good_")]:
        missing.append(f"{rule}: no good case (cases/good_*.py)")
    if fixable != "never" and not [n for n in names if n.startswith("bad_") and ".fixed." in n]:
        missing.append(f"{rule}: fixable '{fixable}' but no fixed case (cases/bad_*.fixed.py)")
    scenario = folder / "scenario.py"
    if not scenario.is_file():
        missing.append(f"{rule}: no scenario.py (the runtime proof's training script)")
    elif "TODO" in scenario.read_text(encoding="utf-8"):
        missing.append(f"{rule}: scenario.py is still the scaffold's placeholder (TODO)")
    if not (runtime_tests / f"test_{folder.name}.py").is_file():
        missing.append(f"{rule}: no runtime test tests/runtime/test_{folder.name}.py")
    if not re.search(rf"^\|[^|\n]*\b{code}\b[^|\n]*\|", project_readme, flags=re.M):
        missing.append(f"{rule}: no row in README.md's rule table")
    return missing


def _check(folder: Path, code: str, fixable: str, runtime_tests: Path = REPO / "tests" / "runtime",
           project_readme: str | None = None) -> list[str]:
    readme = project_readme if project_readme is not None else (REPO / "README.md").read_text(encoding="utf-8")
    return missing_parts(folder, code, fixable, runtime_tests=runtime_tests, project_readme=readme)


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_rule_folder_is_complete(code: str):
    info = all_rules()[code]
    missing = _check(info.folder, code, info.rule.fixable)
    assert not missing, "\n".join(["rule folder incomplete (docs/adding-a-rule.md):", *missing])


def test_every_rule_folder_defines_a_rule():
    folders = {p.name for p in (REPO / "rules").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders == {info.folder.name for info in all_rules().values()}, "a folder under rules/ without a rule.py Rule"


# ---- the checker itself, on a copy of a real rule with one part removed --------------------


@pytest.fixture
def complete_copy(tmp_path: Path):
    info = all_rules()["TRL002"]
    folder = shutil.copytree(info.folder, tmp_path / "rules" / info.folder.name,
                             ignore=shutil.ignore_patterns("__pycache__"))
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    shutil.copy(REPO / "tests" / "runtime" / f"test_{folder.name}.py", runtime)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert missing_parts(folder, "TRL002", "always", runtime_tests=runtime, project_readme=readme) == []
    return folder, runtime, readme


def _remove(case: Path) -> None:
    """A one-file case, or a project case's folder."""
    shutil.rmtree(case) if case.is_dir() else case.unlink()


def _remove_section(readme: Path, title: str) -> None:
    text = readme.read_text(encoding="utf-8")
    readme.write_text(re.sub(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", "", text, flags=re.M | re.S), encoding="utf-8")


REMOVALS = {
    "__init__.py": (lambda f, r: (f / "__init__.py").unlink(), "no __init__.py"),
    "scenario": (lambda f, r: (f / "scenario.py").unlink(), "no scenario.py"),
    "bad cases": (lambda f, r: [_remove(p) for p in (f / "cases").glob("bad_*") if ".fixed." not in p.name], "no bad case"),
    "good cases": (lambda f, r: [_remove(p) for p in (f / "cases").glob("good_*")], "no good case"),
    "fixed cases": (lambda f, r: [p.unlink() for p in (f / "cases").glob("*.fixed.*")], "but no fixed case"),
    "runtime test": (lambda f, r: [p.unlink() for p in r.iterdir()], "no runtime test tests/runtime/test_"),
    **{
        f"section {title}": (lambda f, r, t=title: _remove_section(f / "README.md", t), f"no '## {title}' section")
        for title in README_SECTIONS
    },
    "error text": (
        lambda f, r: (f / "README.md").write_text(
            re.sub(r"(## Why it breaks\n)(.*?)(?=^## )", r"\1\nIt fails.\n\n", (f / "README.md").read_text(), flags=re.M | re.S)
        ),
        "quotes no real error text",
    ),
}


@pytest.mark.parametrize("part", sorted(REMOVALS))
def test_checker_names_the_rule_and_the_removed_part(complete_copy, part: str):
    folder, runtime, readme = complete_copy
    remove, expected = REMOVALS[part]
    remove(folder, runtime)
    missing = missing_parts(folder, "TRL002", "always", runtime_tests=runtime, project_readme=readme)
    assert len(missing) == 1 and expected in missing[0] and missing[0].startswith("TRL002 ("), missing


def test_checker_names_a_missing_table_row(complete_copy):
    folder, runtime, readme = complete_copy
    without_row = "\n".join(line for line in readme.splitlines() if "TRL002" not in line or not line.startswith("|"))
    [message] = missing_parts(folder, "TRL002", "always", runtime_tests=runtime, project_readme=without_row)
    assert message == f"TRL002 ({folder.name}): no row in README.md's rule table"


def test_checker_names_placeholders_left_by_the_scaffold(complete_copy):
    folder, runtime, readme = complete_copy
    (folder / "scenario.py").write_text('raise SystemExit("TODO: write the scenario")\n')
    with open(folder / "README.md", "a", encoding="utf-8") as handle:
        handle.write("\nTODO: the exact error text\n")
    missing = missing_parts(folder, "TRL002", "always", runtime_tests=runtime, project_readme=readme)
    assert [m.split(": ", 1)[1].split(" ", 2)[:2] for m in missing] == [["README.md", "still"], ["scenario.py", "is"]]


def test_a_rule_that_never_fixes_needs_no_fixed_case(complete_copy):
    folder, runtime, readme = complete_copy
    REMOVALS["fixed cases"][0](folder, runtime)
    assert missing_parts(folder, "TRL002", "never", runtime_tests=runtime, project_readme=readme) == []
