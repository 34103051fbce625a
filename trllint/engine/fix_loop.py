"""Applying fixes the way Ruff does.

A round applies the non-overlapping edits of the findings' fixes, re-parses and re-lints; an edit
that overlaps one already taken waits for the next round. Rounds go on until nothing changes (at
most ``MAX_ROUNDS``). A round whose result does not parse is thrown away: the file keeps its last
good text and the failure is reported. Writing the result is trllint.app.atomic_write's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from trllint.core.findings import Edit, Finding, Fix
from trllint.engine.inputs import kind_for
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    findings: list[Finding]  # what remains after fixing
    applied: int = 0
    problems: list[str] = field(default_factory=list)
    # The findings whose unsafe fixes were applied (their Fix says why it is unsafe).
    unsafe_applied: list[Finding] = field(default_factory=list)
    # The code of each fix applied, in order (``--show-fixes``).
    applied_codes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.applied > 0


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.applicability == "safe" or unsafe)


def choose_edits(fixes: list[Fix]) -> tuple[list[Fix], list[Edit]]:
    """The fixes of one round: whole fixes whose edits overlap nothing taken before them."""
    taken: list[Fix] = []
    edits: list[Edit] = []
    for fix in sorted(fixes, key=lambda f: f.span):
        if any(_overlaps(e, other) for e in fix.edits for other in edits):
            continue
        if any(_overlaps(a, b) for i, a in enumerate(fix.edits) for b in fix.edits[i + 1 :]):
            continue
        taken.append(fix)
        edits.extend(fix.edits)
    return taken, sorted(edits, key=lambda e: (e.start, e.end))


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start < b.end and b.start < a.end:
        return True
    # An insertion at the edge of (or at the same point as) another edit: the order is ambiguous.
    return (a.start == a.end and b.start <= a.start <= b.end) or (
        b.start == b.end and a.start <= b.start <= a.end
    )


_BARE_LF = re.compile(r"(?<!\r)\n")


def _in_file_newlines(edits: list[Edit], source: SourceFile) -> list[Edit]:
    """Edits whose line breaks are the file's own: a rule writes "\n", a CRLF file keeps CRLF."""
    newline = source.newline
    if newline == "\n":
        return edits
    return [replace(e, content=_BARE_LF.sub(newline, e.content)) if "\n" in e.content else e for e in edits]


def apply_edits(text: str, edits: list[Edit]) -> str:
    out: list[str] = []
    cursor = 0
    for edit in edits:
        out.append(text[cursor : edit.start])
        out.append(edit.content)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def apply_fix(source: SourceFile, fix: Fix) -> str:
    """``source.text`` with one fix applied, in the file's line breaks (an editor's quick fix of
    one finding; the loop below applies many)."""
    return apply_edits(source.text, _in_file_newlines(sorted(fix.edits, key=lambda e: (e.start, e.end)), source))


def still_valid(before: SourceFile, after_text: str, filename: str) -> str | None:
    """Why ``after_text`` must not be written, or None when it is sound (the file's kind knows
    what sound means: Python that parses, TOML that loads)."""
    return kind_for(filename).validate(before, after_text)


def fix_source(source: SourceFile, filename: str, ruleset: RuleSet, *, unsafe: bool) -> FixOutcome:
    current = source
    findings = lint_source(current, filename, ruleset)
    applied = 0
    problems: list[str] = []
    unsafe_applied: list[Finding] = []
    applied_codes: list[str] = []
    for _ in range(MAX_ROUNDS):
        fixes = [f.fix for f in findings if applicable(f.fix, unsafe)]
        if not fixes:
            break
        if not current.positions_reliable:
            problems.append("fixes were not applied: LibCST does not reproduce this file exactly; please report it")
            break
        taken, edits = choose_edits(fixes)  # type: ignore[arg-type]
        new_text = apply_edits(current.text, _in_file_newlines(edits, current))
        if new_text == current.text:
            break
        reason = still_valid(current, new_text, filename)
        if reason is not None:
            codes = sorted({f.code for f in findings if f.fix in taken})
            problems.append(f"fixes for {', '.join(codes)} were not applied: {reason}; please report it")
            break
        current = current.with_text(new_text)
        applied += len(taken)
        applied_codes += [f.code for f in findings if f.fix in taken]
        unsafe_applied += [f for f in findings if f.fix in taken and f.fix.applicability == "unsafe"]
        findings = lint_source(current, filename, ruleset)
    else:
        if any(applicable(f.fix, unsafe) for f in findings):
            problems.append(f"fixes did not settle after {MAX_ROUNDS} rounds; please report it")
    return FixOutcome(current.text, findings, applied, problems, unsafe_applied, applied_codes)
