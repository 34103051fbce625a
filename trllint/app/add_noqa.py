"""``--add-noqa``: silence every current finding with a ``# noqa: CODE`` comment on its line.

For adopting the linter on an existing code base, as Ruff's ``--add-noqa`` does: an existing
``# noqa: X`` on the line is merged (``# noqa: TRL001, X``), other comments are kept, and a second
run adds nothing. A comment cannot go on every line: one that ends inside a string literal (a
finding on the first line of a multi-line call argument that is a triple-quoted string) or with a
backslash continuation would change the code or break it. Such a finding is left as it is and
named, never written around. Files are written as ``--fix`` writes them: atomically, and only
when the result still parses.
"""

from __future__ import annotations

import io
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from trllint.app.atomic_write import WriteError, write_atomically
from trllint.engine.fix_loop import still_valid
from trllint.core.findings import Finding
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source, read_source
from trllint.core.suppression import NOQA_COMMENT
from trllint.core.source import SourceFile


@dataclass
class NoqaOutcome:
    added: int = 0
    # (finding, why it could not be silenced)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def with_noqa_comments(source: SourceFile, findings: list[Finding], outcome: NoqaOutcome) -> str:
    """``source.text`` with the codes of ``findings`` in a ``# noqa`` comment on their lines."""
    by_line: dict[int, set[str]] = {}
    for finding in findings:
        if finding.internal:
            outcome.skipped.append((finding, "the linter's own findings cannot be silenced"))
        else:
            by_line.setdefault(finding.line, set()).add(finding.code)
    blocked, comments = _python_lines(source.text) if source.is_python else ({}, {})
    lines = source.lines
    starts = source.line_starts
    edits: list[tuple[int, int, str]] = []
    for number, codes in sorted(by_line.items()):
        line = lines[number - 1]
        why = blocked.get(number) or ("ends with a backslash continuation" if line.endswith("\\") else None)
        if why is not None:
            outcome.skipped.extend((f, f"its line {why}") for f in findings if f.line == number and not f.internal)
            continue
        comment_at = comments.get(number, 0 if not source.is_python else None)
        match = NOQA_COMMENT.search(line, comment_at) if comment_at is not None else None
        if match is not None and match.group("codes") is None:
            continue  # a bare `# noqa` silences everything already
        if match is not None:
            present = {c.strip().upper() for c in match.group("codes").split(",")}
            merged = ", ".join(sorted(present | codes))
            edits.append((starts[number - 1] + match.start(), starts[number - 1] + match.end(), f"# noqa: {merged}"))
            outcome.added += len(codes - present)
        else:
            end = starts[number - 1] + len(line.rstrip(" \t"))
            edits.append((end, starts[number - 1] + len(line), f"  # noqa: {', '.join(sorted(codes))}"))
            outcome.added += len(codes)
    text = source.text
    for start, end, content in reversed(edits):
        text = text[:start] + content + text[end:]
    return text


def check_silenced(source: SourceFile, new_text: str, filename: str, ruleset: RuleSet, outcome: NoqaOutcome) -> None:
    """Name the findings the added comments did not silence, so that the count never promises
    more than it did."""
    for finding in lint_source(source.with_text(new_text), filename, ruleset):
        if not finding.internal:
            outcome.skipped.append((finding, "still reported after the comment was added"))


def _python_lines(text: str) -> tuple[dict[int, str], dict[int, int]]:
    """Lines no comment can end (line -> why), and the column where each existing comment starts."""
    blocked: dict[int, str] = {}
    comments: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.start[1]
            elif token.start[0] < token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
                for row in range(token.start[0], token.end[0]):
                    blocked[row] = "ends inside a string literal"
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the file does not parse: its findings are TRL000, which no comment silences
    return blocked, comments


def add_noqa_to_file(path: Path, display: str, ruleset: RuleSet) -> NoqaOutcome:
    outcome = NoqaOutcome()
    try:
        data = path.read_bytes()
    except OSError as exc:
        outcome.problems.append(f"cannot read: {exc.strerror or exc}")
        return outcome
    if path.name.endswith(".ipynb"):  # hook: notebooks take the comments in their cells
        from trllint.engine.inputs.notebook import NotebookError, notebook_with_noqa

        try:
            new = notebook_with_noqa(data, display, path.name, ruleset, outcome)
        except NotebookError as exc:
            outcome.problems.append(str(exc))
            return outcome
    else:
        source = read_source(data, display, path.name)
        if isinstance(source, Finding):
            outcome.skipped.append((source, "the file cannot be read"))
            return outcome
        new_text = with_noqa_comments(source, lint_source(source, path.name, ruleset), outcome)
        reason = still_valid(source, new_text, path.name) if new_text != source.text else None
        if reason is not None:
            outcome.problems.append(f"no comment added: {reason}; please report it")
            outcome.added = 0
            return outcome
        if new_text != source.text:
            check_silenced(source, new_text, path.name, ruleset, outcome)
        new = source.to_bytes(new_text)
    if new != data:
        try:
            write_atomically(path, new, expected_old=data)
        except WriteError as exc:
            outcome.problems.append(str(exc))
            outcome.added = 0
    return outcome


def add_noqa(jobs: list[tuple[Path, str]], ruleset: RuleSet) -> int:
    """Add the comments to every file; the exit code (1 when a finding could not be silenced)."""
    added = 0
    unsilenced = False
    for path, display in jobs:
        outcome = add_noqa_to_file(path, display, ruleset)
        added += outcome.added
        for problem in outcome.problems:
            sys.stderr.write(f"trllint: error: {display}: {problem}\n")
        for finding, why in outcome.skipped:
            where = f"cell {finding.cell}:" if finding.cell is not None else ""
            sys.stderr.write(f"{display}:{where}{finding.line}:{finding.column}: {finding.code} not silenced: {why}\n")
        unsilenced = unsilenced or bool(outcome.problems or outcome.skipped)
    sys.stderr.write(f"Added {added} noqa {'directive' if added == 1 else 'directives'}.\n")
    return 1 if unsilenced else 0
