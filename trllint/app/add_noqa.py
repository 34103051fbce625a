"""``--add-noqa``: silence every current finding with a ``# noqa: CODE`` comment on its line.

For adopting the linter on an existing code base, as Ruff's ``--add-noqa`` does. The comments
are written by ``trllint.engine.noqa`` (what it refuses to write around, and why, is said there),
each file's bytes go through ``trllint.engine.pipeline`` and the files through the process pool.
Files are written as ``--fix`` writes them: atomically, and only when the result still parses.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from trllint.app.atomic_write import WriteError, write_atomically
from trllint.app.pool import map_files
from trllint.engine.noqa import NoqaOutcome
from trllint.engine.pipeline import add_noqa_bytes
from trllint.rule.ruleset import RuleSet


def add_noqa_to_file(path: Path, display: str, ruleset: RuleSet) -> NoqaOutcome:
    try:
        data = path.read_bytes()
    except OSError as exc:
        outcome = NoqaOutcome()
        outcome.problems.append(f"cannot read: {exc.strerror or exc}")
        return outcome
    outcome, new = add_noqa_bytes(data, display, path.name, ruleset)
    if new is not None and new != data:
        try:
            write_atomically(path, new, expected_old=data)
        except WriteError as exc:
            outcome.problems.append(str(exc))
            outcome.added = 0
    return outcome


def add_noqa(jobs: list[tuple[Path, str]], ruleset: RuleSet, *, workers: int = 1) -> int:
    """Add the comments to every file; the exit code (1 when a finding could not be silenced)."""
    outcomes = map_files(partial(add_noqa_to_file, ruleset=ruleset), jobs, workers=workers, rewrites=True)
    added = 0
    unsilenced = False
    for (path, display), outcome in zip(jobs, outcomes):
        added += outcome.added
        for problem in outcome.problems:
            sys.stderr.write(f"trllint: error: {display}: {problem}\n")
        for finding, why in outcome.skipped:
            where = f"cell {finding.cell}:" if finding.cell is not None else ""
            sys.stderr.write(f"{display}:{where}{finding.line}:{finding.column}: {finding.code} not silenced: {why}\n")
        unsilenced = unsilenced or bool(outcome.problems or outcome.skipped)
    sys.stderr.write(f"Added {added} noqa {'directive' if added == 1 else 'directives'}.\n")
    return 1 if unsilenced else 0
