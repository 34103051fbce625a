"""SARIF 2.1.0 for code-scanning tools, each fix as a SARIF ``fixes`` object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trllint import __version__
from trllint.report.run_report import RunReport
from trllint.core.findings import Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_ENGINE_RULES = {
    "TRL000": ("unreadable-or-invalid-source", "The file could not be read or parsed."),
    "TRL999": ("internal-error", "A rule failed on this file; the other rules still ran."),
}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, Any]:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _uri(path: str) -> str:
    return Path(path).as_posix()


def _rule_descriptor(code: str, report: RunReport) -> dict[str, Any]:
    info = report.rules.get(code)
    if info is None:
        name, text = _ENGINE_RULES.get(code, (code.lower(), code))
        return {"id": code, "name": name, "shortDescription": {"text": text}, "help": {"text": text}}
    try:
        help_text = info.readme.read_text(encoding="utf-8")
    except OSError:
        help_text = info.message
    return {
        "id": code,
        "name": info.name,
        "shortDescription": {"text": info.message},
        "fullDescription": {"text": info.message},
        # The page once, as Markdown (what code scanning shows); the plain text is one line and
        # points at it. Twice per rule, the pages were most of a small report's bytes.
        "help": {"text": f"{info.message} (`trllint --explain {code}`)", "markdown": help_text},
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixable": info.fixable, "status": info.status, "tags": ["distributed-training"]},
    }


def _result(finding: Finding, index: int, preview: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.path)},
                    "region": _region(finding.line, finding.column, finding.end_line, finding.end_column),
                }
            }
        ],
    }
    if finding.cell is not None:
        # SARIF has no notebook cells: the region counts lines in the cell this names.
        result["locations"][0]["logicalLocations"] = [{"name": f"cell {finding.cell}", "kind": "notebookCell"}]
        result["properties"] = {"cell": finding.cell}
    if preview:  # shown only because preview is on
        result.setdefault("properties", {})["preview"] = True
    if finding.kind:  # which of its rule's kinds, each graduating on its own
        result.setdefault("properties", {})["kind"] = finding.kind
    if finding.evidence:
        result["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(evidence.path)},
                    "region": {"startLine": evidence.line},
                },
                "message": {"text": evidence.message},
            }
            for number, evidence in enumerate(finding.evidence)
        ]
    if finding.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": f"{finding.fix.applicability} fix for {finding.code}"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": _uri(finding.path)},
                        "replacements": [
                            {
                                "deletedRegion": _region(*edit.start_position, *edit.end_position),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in finding.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def render(report: RunReport) -> str:
    codes = sorted(set(report.rules) | {f.code for f in report.findings})
    index = {code: i for i, code in enumerate(codes)}
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trllint",
                        "version": __version__,
                        "rules": [_rule_descriptor(code, report) for code in codes],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.code], report.is_preview(f)) for f in report.findings],
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
