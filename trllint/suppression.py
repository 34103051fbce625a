"""``# noqa`` comments: ``# noqa: TRL001`` on the reported line drops that code; bare ``# noqa`` all."""

from __future__ import annotations

import re

from trllint.findings import Finding
from trllint.source import SourceFile

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


def without_suppressed(findings: list[Finding], source: SourceFile) -> list[Finding]:
    """The findings no noqa comment suppresses; the engine's own (TRL000, TRL999) always stay."""
    kept = []
    lines = source.lines
    for finding in findings:
        if finding.internal or not (0 < finding.line <= len(lines)):
            kept.append(finding)
            continue
        match = _NOQA.search(lines[finding.line - 1])
        if match is None:
            kept.append(finding)
            continue
        codes = match.group("codes")
        if codes is not None and finding.code not in {c.strip().upper() for c in codes.split(",")}:
            kept.append(finding)
    return kept
