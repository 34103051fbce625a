"""``# noqa`` comments: ``# noqa: TRL001`` on the reported line drops that code; bare ``# noqa`` all."""

from __future__ import annotations

import re

from trllint.core.findings import Finding
from trllint.core.source import SourceFile

NOQA_COMMENT = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


def last_noqa(line: str) -> re.Match[str] | None:
    """The line's last ``# noqa``: a comment ends the line, so an earlier one sits in a string."""
    match = None
    for match in NOQA_COMMENT.finditer(line):
        pass
    return match


def without_suppressed(findings: list[Finding], source: SourceFile) -> list[Finding]:
    """The findings no noqa comment suppresses; the engine's own (TRL000, TRL999) always stay."""
    kept = []
    lines = source.lines
    for finding in findings:
        if finding.internal or not (0 < finding.line <= len(lines)):
            kept.append(finding)
            continue
        match = last_noqa(lines[finding.line - 1])
        if match is None:
            kept.append(finding)
            continue
        codes = match.group("codes")
        if codes is not None and finding.code not in {c.strip().upper() for c in codes.split(",")}:
            kept.append(finding)
    return kept
