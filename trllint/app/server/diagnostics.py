"""Findings as the editor sees them: the last lint of an open file, and each finding as an LSP
diagnostic (its range in the client's units, the rule's page as the code's link, the finding's
evidence as related information)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec

from trllint.app.server.documents import OpenFile, split_lines
from trllint.app.server.settings import Settings
from trllint.core.findings import Finding
from trllint.rule.registry import available_rules


@dataclass
class Linted:
    """The last lint of an open file: what it found, for the texts it found it in."""

    file: OpenFile
    settings: Settings
    findings: list[tuple[int, Finding]]  # (part index, finding)
    diagnostics: list[lsp.Diagnostic]  # one per finding, in the same order
    dependencies: set[str] = field(default_factory=set)  # project modules its findings read

    def holds_for(self, file: OpenFile) -> bool:
        return [p.text for p in file.parts] == [p.text for p in self.file.parts]


def position(codec: PositionCodec, lines: list[str], line: int, character: int) -> lsp.Position:
    """A 0-based (line, code point) as the client counts (UTF-16 unless it chose otherwise)."""
    if line >= len(lines):
        return lsp.Position(len(lines), 0)
    text = lines[line].rstrip("\r\n")
    return lsp.Position(line, codec.client_num_units(text[: max(character, 0)]))

def range_of(codec: PositionCodec, text: str, start: tuple[int, int], end: tuple[int, int]) -> lsp.Range:
    lines = split_lines(text)
    first = position(codec, lines, *start)
    last = position(codec, lines, *end)
    if (last.line, last.character) < (first.line, first.character):
        last = first
    return lsp.Range(first, last)

def diagnostic(codec: PositionCodec, file: OpenFile, part: int, finding: Finding, key: int) -> lsp.Diagnostic:
    text = file.parts[part].text
    where = range_of(codec, text, (finding.line - 1, finding.column - 1), (finding.end_line - 1, finding.end_column - 1))
    info = available_rules().get(finding.code)
    page = lsp.CodeDescription(info.readme.resolve().as_uri()) if info is not None and info.readme.is_file() else None
    message = finding.message
    if finding.fix is not None:
        message += " [safe fix]" if finding.fix.applicability == "safe" else " [unsafe fix]"
    return lsp.Diagnostic(
        range=where,
        message=message,
        severity=lsp.DiagnosticSeverity.Error if finding.internal else lsp.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=page,
        source="trllint",
        related_information=_related(file, finding) or None,
        data={"key": key},
    )

def _related(file: OpenFile, finding: Finding) -> list[lsp.DiagnosticRelatedInformation]:
    related = []
    for evidence in finding.evidence:
        if evidence.path == file.display or evidence.cell is not None:
            part = evidence.cell - 1 if file.is_notebook and evidence.cell else 0
            uri = file.parts[min(part, len(file.parts) - 1)].uri
        else:
            path = Path(evidence.path)
            uri = (path if path.is_absolute() else Path.cwd() / path).as_uri()
        line = max(evidence.line - 1, 0)
        where = lsp.Range(lsp.Position(line, 0), lsp.Position(line + 1, 0))
        related.append(lsp.DiagnosticRelatedInformation(lsp.Location(uri, where), evidence.message))
    return related
