"""One JSON array; each element carries DESIGN.md's fields and the fix as text edits."""

from __future__ import annotations

import json
from typing import Any

from trllint.report.run_report import RunReport
from trllint.core.findings import Evidence, Finding


def finding_to_dict(finding: Finding, report: RunReport) -> dict[str, Any]:
    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability,
            "reason": finding.fix.reason,
            "message": None,
            "edits": [
                {
                    "content": edit.content,
                    "location": {"line": edit.start_position[0], "column": edit.start_position[1]},
                    "end_location": {"line": edit.end_position[0], "column": edit.end_position[1]},
                }
                for edit in finding.fix.edits
            ],
        }
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "path": finding.path,
        "filename": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "fix": fix,
        "url": None,
        # A notebook's cell (1-based, all cells counted); line and end_line then count in the cell.
        "cell": finding.cell,
        # The facts that made the finding: the wrap, the launch config, the rank test.
        "evidence": [_evidence(e) for e in finding.evidence],
        # Shown only because preview is on (--preview): a preview rule's, or a preview behaviour.
        "preview": report.is_preview(finding),
        # Which of its rule's kinds the finding is (each graduates to the default on its own); "" if none.
        "kind": finding.kind,
    }


def _evidence(evidence: Evidence) -> dict[str, Any]:
    item: dict[str, Any] = {"path": evidence.path, "line": evidence.line, "message": evidence.message}
    if evidence.cell is not None:
        item["cell"] = evidence.cell
    return item


def render(report: RunReport) -> str:
    if report.statistics:
        return json.dumps(statistics(report), indent=2) + "\n"
    return json.dumps([finding_to_dict(f, report) for f in report.findings], indent=2) + "\n"


def statistics(report: RunReport) -> list[dict[str, Any]]:
    """``--statistics``: a count per code, most frequent first (Ruff's JSON statistics)."""
    counts: dict[str, dict[str, Any]] = {}
    for finding in report.findings:
        row = counts.setdefault(
            finding.code, {"code": finding.code, "name": finding.name, "count": 0, "fixable": False}
        )
        row["count"] += 1
        row["fixable"] = row["fixable"] or report.fixable(finding)
    return sorted(counts.values(), key=lambda row: (-row["count"], row["code"]))
