"""The text transforms of ``--add-noqa``: a ``# noqa: CODE`` comment on each finding's line.

An existing ``# noqa: X`` on the line is merged (``# noqa: TRL001, X``), other comments are kept,
and a second run adds nothing. A comment cannot go on every line: one that ends inside a string
literal (a finding on the first line of a multi-line call argument that is a triple-quoted
string) or with a backslash continuation would change the code or break it. Such a finding is
left as it is and named, never written around. (Reading, writing and the run are
``trllint.engine.pipeline`` and ``trllint.app.add_noqa``.)
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

from trllint.core.findings import Finding
from trllint.core.source import SourceFile
from trllint.core.suppression import noqa_directives
from trllint.engine.lint import lint_source
from trllint.rule.ruleset import RuleSet


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
    blocked = _lines_no_comment_can_end(source.text) if source.is_python else {}
    # The `# noqa` each line already has, as the engine reads it when it suppresses: codes merged
    # anywhere else would silence nothing.
    existing = noqa_directives(source).lines
    lines = source.lines
    starts = source.line_starts
    edits: list[tuple[int, int, str]] = []
    for number, codes in sorted(by_line.items()):
        line = lines[number - 1]
        why = blocked.get(number) or ("ends with a backslash continuation" if line.endswith("\\") else None)
        if why is not None:
            outcome.skipped.extend((f, f"its line {why}") for f in findings if f.line == number and not f.internal)
            continue
        comment = existing.get(number)
        if comment is not None and comment.codes is None:
            continue  # a bare `# noqa` silences everything already
        if comment is not None:
            present = {c.upper() for c in comment.codes or ()}
            merged = ", ".join(sorted(present | codes))
            edits.append((starts[number - 1] + comment.start, starts[number - 1] + comment.end, f"# noqa: {merged}"))
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


def _lines_no_comment_can_end(text: str) -> dict[int, str]:
    """Lines no comment can end (line -> why)."""
    blocked: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
                for row in range(token.start[0], token.end[0]):
                    blocked[row] = "ends inside a string literal"
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the file does not parse: its findings are TRL000, which no comment silences
    return blocked
