"""Create every part of a new rule, in the manner of Ruff's ``scripts/add_rule.py``.

    python scripts/add_rule.py TRL011 my-rule-name

writes ``rules/trl011_my_rule_name/`` (``__init__.py``, ``rule.py``, ``README.md``, a bad, a
bad.fixed and a good case with their ``findings.snap``, ``scenario.py``), the runtime test
``tests/runtime/test_trl011_my_rule_name.py`` and a row in README.md's rule table. The rule is
written as the shipped rules are (docs/adding-a-rule.md): a ``check_module`` that asks the
semantic model and the facts, reports, and fixes with an applicability. It runs and passes its
own cases from the start; tests/test_rule_completeness.py names the placeholders still to write
(README, scenario), and the runtime test fails until written. Nothing in the engine needs an edit.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RULE = '''"""{code} {name}: TODO one line: what it finds.

TODO: why it breaks on several ranks, in a few lines; README.md is the rule's full page.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.findings import ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.calls import calls_in
from trllint.rule.base import AllOf, AnyOf, Calls, FindingKind, Fix, Rule
from trllint.semantic.context import CONTEXT_METADATA
from trllint.semantic.model import SemanticModel


class Unsafe(ReasonKind):
    """Why the fix may change what runs on one process: shown with the fix, applied only with
    --unsafe-fixes."""

    KEYWORDS = "replace_me's keywords may mean something else to fixed_call"


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    # What is wrong and what to do, in one line.
    message = "accelerator.replace_me() breaks on several ranks; call accelerator.fixed_call() instead"
    fixable = "always"  # "never", "sometimes" (some findings carry a fix) or "always"
    # Each finding names its kind: the evidence it rests on. A kind runs only with --preview until
    # the benchmark's test split graduates it (graduation.toml, written by scripts/graduate.py).
    kinds = {{"accelerator-call": FindingKind("a replace_me call on an accelerator the code creates")}}
    # What a file must hold to be worth parsing: first its text, then its code (a call of replace_me).
    prefilter = AllOf(AnyOf("replace_me"), AnyOf(Calls("replace_me")))
    # The facts below ask where a node sits (model.context).
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        for call in calls_in(model):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "replace_me"):
                continue
            if not is_accelerator(func.value, model.context):
                continue  # another object's replace_me: what the code does not prove stays silent
            self.report(call, fix=self._fix(call, func), kind="accelerator-call")

    def _fix(self, call: cst.Call, func: cst.Attribute) -> Fix:
        rename = self.replace(func.attr, cst.Name("fixed_call"))
        keywords = any(arg.keyword is not None for arg in call.args)
        return self.fix(rename, reason=Unsafe.KEYWORDS.text() if keywords else None)
'''

README = '''# {code} {name}

A **preview** rule: it runs only with `--preview` (or `preview = true` in the configuration),
until its precision on the benchmark's test split meets the bar in the project README.

## What it finds

TODO: the pattern, in the words of the code a user writes, and what stays silent.

## Why it breaks

TODO: what happens on several ranks or GPUs, and the real error a user would paste into a search box:

```
TODO: the exact error text (or the wrong number that is logged)
```

## Example

```python
accelerator.replace_me(model)
```

## Fixed

```python
accelerator.fixed_call(model)
```

## Fix safety

TODO: why the fix cannot fail or change a number on any rank (safe), or when it can (unsafe:
the rule's `Unsafe` reason says so, and only `--unsafe-fixes` applies it).

## Runtime proof

TODO: what scenario.py does, how the script as written fails under `accelerate launch`, and that
the copy `trllint --fix` rewrote runs and is right.

```
python -m pytest -m runtime tests/runtime/test_{folder}.py
```
'''

BAD = '''# TODO: real-looking code that has the bug; `# expect: CODE` goes on the line above each finding.
from accelerate import Accelerator

accelerator = Accelerator()
# expect: {code}
accelerator.replace_me(model)
# expect: {code}
accelerator.replace_me(model, strict=True)
'''

BAD_FIXED = '''# TODO: real-looking code that has the bug; `# expect: CODE` goes on the line above each finding.
from accelerate import Accelerator

accelerator = Accelerator()
# expect: {code}
accelerator.fixed_call(model)
# expect: {code}
accelerator.fixed_call(model, strict=True)
'''

GOOD = '''# TODO: real-looking code close to the bug but correct: it must stay silent.
from accelerate import Accelerator

accelerator = Accelerator()
accelerator.fixed_call(model)
cache.replace_me(model)  # not an accelerator
'''

# Every finding of the cases with its column and exact message; tests/test_rule_cases.py checks it
# and writes it again with TRLLINT_UPDATE_SNAPSHOTS=1 once the rule and its cases are real.
FINDINGS_SNAP = '''# case:line:column: CODE message [fix] [kind]  (checked by tests/test_rule_cases.py; written by
# TRLLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_cases.py)
bad_example.py:6:1: {code} accelerator.replace_me() breaks on several ranks; call accelerator.fixed_call() instead [safe fix] [accelerator-call]
bad_example.py:8:1: {code} accelerator.replace_me() breaks on several ranks; call accelerator.fixed_call() instead [unsafe fix: replace_me's keywords may mean something else to fixed_call] [accelerator-call]
'''

SCENARIO = '''"""{code} runtime scenario: TODO a small training script with the bug.

tests/runtime/test_{folder}.py runs it under ``accelerate launch`` as written (it must fail with
the real error, or print a wrong number) and after ``trllint --fix`` rewrote a copy (it must run
and be right). Keep it tiny: a few steps of a small model on two CPU ranks over gloo.

    accelerate launch --multi_gpu --num_processes 2 scenario.py
"""

raise SystemExit("TODO: write the {code} scenario")
'''

RUNTIME_TEST = '''"""{code} at runtime: scenario.py as written fails, the copy ``trllint --fix`` rewrote works."""

from __future__ import annotations

import pytest

from tests.runtime.launch import CPU_DDP, accelerate_launch, buggy_and_fixed

RULE_FOLDER = "{folder}"
LAUNCH_TIMEOUT_S = 240


def test_cpu_ranks_fail_until_the_fix(tmp_path):
    pytest.fail("{code}: the runtime proof is not written yet (tests/runtime/test_{folder}.py)")
    buggy, fixed = buggy_and_fixed(RULE_FOLDER, "{code}", tmp_path)
    run = accelerate_launch(buggy, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert not run.ok and "TODO: the real error" in run.output, run.output[-4000:]
    run = accelerate_launch(fixed, CPU_DDP, timeout=LAUNCH_TIMEOUT_S)
    assert run.ok, run.output[-4000:]
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
    row = f"| [{code}](rules/{folder}/README.md) | {name} | preview | TODO: what it finds, in one line |\n"
    lines.insert(rows[-1] + 1, row)
    readme.write_text("".join(lines), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create every part of a new trllint rule.")
    parser.add_argument("code", help="the rule's code, as TRL011")
    parser.add_argument("name", help="the rule's name, as my-rule-name")
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
