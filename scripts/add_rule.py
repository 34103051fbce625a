"""Create every part of a new rule, in the manner of Ruff's ``scripts/add_rule.py``.

    python scripts/add_rule.py TRL006 collective-under-rank-guard

writes ``rules/trl006_collective_under_rank_guard/`` (``__init__.py``, ``rule.py``, ``README.md``
with every section, one bad / bad.fixed / good case and ``findings.snap``, ``scenario.py``), the
runtime test ``tests/runtime/test_trl006_collective_under_rank_guard.py`` (it fails until it is
written), and a row in README.md's rule table. The generated rule runs and passes its own cases from the start;
tests/test_rule_completeness.py names the placeholders still to write (README, scenario) and the
runtime test fails until written. Make it the rule you mean, following docs/adding-a-rule.md.
Nothing in the engine needs an edit.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RULE = '''"""{code} {name}: TODO one line: what it finds.

README.md says what it finds, why it breaks and why the fix is safe; cases/ shows it.
"""

from __future__ import annotations

import libcst as cst

from trllint.rule.base import AnyOf, Rule


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    # What is wrong and what to do, in one line.
    message = "TODO: replace_me() is wrong here; call fixed_call() instead"
    fixable = "always"  # "never", "sometimes" (some findings carry a fix) or "always"
    # New rules start in preview (run only with --preview); "stable" once the rule meets the
    # graduation bar on the benchmark's test split (README, Rules).
    status = "preview"
    # A file that spells none of these cannot hold a finding and is not parsed for this rule.
    prefilter = AnyOf("replace_me")

    # TODO: the rule's logic. Ask the semantic model (trllint.semantic) and the shared facts (trllint.facts)
    # rather than walking the tree by hand; report only what the code proves. A verdict that needs
    # the whole file first goes in `def check_module(self, model)` instead (docs/adding-a-rule.md).
    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "replace_me":
            self.report(node, fix=self.fix(self.replace(node.func, cst.Name("fixed_call"))))
'''

README = '''# {code} {name}

## What it finds

TODO: the pattern, in the words of the code a user writes, and what is not flagged.

## Why it breaks

TODO: what happens on several ranks or GPUs, and the real error a user would paste into a search box:

```
TODO: the exact error text (or the wrong number that is logged)
```

## Example

```python
replace_me()
```

## Fixed

```python
fixed_call()
```

## Fix safety

TODO: why the fix cannot fail or change a number on any rank (then it is safe), or when it can
(then it is unsafe, and say so in rule.py with `self.fix(..., unsafe=True)`).

## Runtime proof

```
pytest tests/runtime/test_{folder}.py
```

TODO: what scenario.py does, how the script as written fails under `accelerate launch`, and that
the copy `trllint --fix` rewrote runs and is right.
'''

BAD = '''# TODO: real-looking code that has the bug; `# expect: CODE` goes on the line above each finding.
# expect: {code}
replace_me()
'''

# The case harness's snapshot of the placeholder's one finding (tests/test_rule_cases.py writes it
# again with TRLLINT_UPDATE_SNAPSHOTS=1 once the rule and its cases are real).
FINDINGS_SNAP = '''# case:line:column: CODE message [fix] [preview]  (checked by tests/test_rule_cases.py; written by
# TRLLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_cases.py)
bad_example.py:3:1: {code} TODO: replace_me() is wrong here; call fixed_call() instead [safe fix]
'''

BAD_FIXED = '''# TODO: real-looking code that has the bug; `# expect: CODE` goes on the line above each finding.
# expect: {code}
fixed_call()
'''

GOOD = '''# TODO: real-looking code that is close to the bug but correct: it must stay silent.
fixed_call()
'''

SCENARIO = '''"""{code} runtime scenario: TODO a small training script with the bug.

Run under ``accelerate launch`` by tests/runtime/test_{folder}.py, as written (it must fail with
the real error, or log a wrong number) and after ``trllint --fix`` rewrote a copy (it must run and
be right). Keep it tiny: a few steps of a small model on two CPU ranks over gloo.
"""

raise SystemExit("TODO: write the {code} scenario")
'''

RUNTIME_TEST = '''"""{code} at runtime: scenario.py as written fails, the copy ``trllint --fix`` rewrote works."""

from __future__ import annotations

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed  # noqa: F401

RULE = "{folder}"
CODE = "{code}"


def test_buggy_fails_and_fixed_runs(tmp_path):
    # TODO, then delete the pytest.fail line:
    #   buggy, fixed = buggy_and_fixed(RULE, CODE, tmp_path)
    #   assert not accelerate_launch(buggy, CPU_DDP).ok and "the real error" in ...
    #   assert accelerate_launch(fixed, CPU_DDP).ok
    pytest.fail(f"{{CODE}}: the runtime proof is not written yet (tests/runtime/test_{{RULE}}.py)")
'''


class ScaffoldError(Exception):
    pass


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def add_rule(code: str, name: str, root: Path = REPO) -> list[Path]:
    """Write the rule's parts under ``root`` (a checkout); the paths written."""
    if not re.fullmatch(r"TRL\d{3}", code):
        raise ScaffoldError(f"code {code!r}: expected TRL and three digits, as TRL006")
    if not re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", name):
        raise ScaffoldError(f"name {name!r}: expected lower-case words joined by '-', as collective-under-rank-guard")
    rules = root / "rules"
    if not rules.is_dir():
        raise ScaffoldError(f"{root}: no rules/ folder here; run from a trllint checkout or pass --root")
    taken = [p.name for p in rules.iterdir() if p.name.startswith(code.lower() + "_")]
    if taken:
        raise ScaffoldError(f"{code} exists already: rules/{taken[0]}")
    folder = f"{code.lower()}_{name.replace('-', '_')}"
    values = {"code": code, "name": name, "cls": class_name(name), "folder": folder}
    files = {
        rules / folder / "__init__.py": "",
        rules / folder / "rule.py": RULE,
        rules / folder / "README.md": README,
        rules / folder / "cases" / "bad_example.py": BAD,
        rules / folder / "cases" / "bad_example.fixed.py": BAD_FIXED,
        rules / folder / "cases" / "good_example.py": GOOD,
        rules / folder / "cases" / "findings.snap": FINDINGS_SNAP,
        rules / folder / "scenario.py": SCENARIO,
        root / "tests" / "runtime" / f"test_{folder}.py": RUNTIME_TEST,
    }
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values), encoding="utf-8")
    written = list(files)
    if _add_table_row(root / "README.md", code, name, folder):
        written.append(root / "README.md")
    return written


def _add_table_row(readme: Path, code: str, name: str, folder: str) -> bool:
    """A row after the last row of README.md's rule table; False when there is no table."""
    if not readme.is_file():
        return False
    lines = readme.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if re.match(r"\| \[TRL\d{3}\]\(rules/", line)]
    if not rows:
        return False
    row = f"| [{code}](rules/{folder}/README.md) | {name} | preview | TODO: what it finds | TODO: the fix | TODO: the runtime proof |\n"
    lines.insert(rows[-1] + 1, row)
    readme.write_text("".join(lines), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create every part of a new trllint rule.")
    parser.add_argument("code", help="the rule's code, as TRL006")
    parser.add_argument("name", help="the rule's name, as collective-under-rank-guard")
    parser.add_argument("--root", type=Path, default=REPO, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    try:
        written = add_rule(args.code.upper(), args.name, args.root)
    except ScaffoldError as exc:
        sys.stderr.write(f"add_rule: error: {exc}\n")
        return 2
    for path in written:
        sys.stdout.write(f"wrote {path.relative_to(args.root) if path.is_relative_to(args.root) else path}\n")
    sys.stdout.write("next: docs/adding-a-rule.md; every TODO in those files is yours to write\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
