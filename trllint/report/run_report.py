"""What every output format renders: a finished run (:class:`RunReport`) and what it says of each
rule (:class:`RuleDoc`). A module of its own so that the formats and the package face that picks
among them (``trllint.report.render``) both import it, and no format imports the face."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trllint.core.findings import Finding, Fixable, RuleStatus


@dataclass(frozen=True)
class RuleDoc:
    """What a report says of a rule: reports know findings and these, never the rule classes."""

    code: str
    name: str
    message: str
    fixable: Fixable
    readme: Path
    status: RuleStatus = "stable"


@dataclass
class RunReport:
    findings: list[Finding]
    rules: dict[str, RuleDoc]
    fixed: int = 0
    fix_mode: bool = False
    unsafe_fixes: bool = False
    statistics: bool = False
    # Paths given on the command line that do not exist: then a clean result is no "all passed".
    paths_missing: int = 0
    color: bool = False
    # Text: one indented line per fact a finding stands on (``--show-evidence``).
    show_evidence: bool = False
    # Text: the findings only, no closing summary line (``-q``, as Ruff's --quiet).
    quiet: bool = False
    diffs: list[str] = field(default_factory=list)

    def is_preview(self, finding: Finding) -> bool:
        """Whether the finding is there only because preview is on: a preview behaviour of its
        rule, or any finding of a preview rule."""
        rule = self.rules.get(finding.code)
        return finding.preview or (rule is not None and rule.status == "preview")

    def fixable(self, finding: Finding) -> bool:
        return finding.fix is not None and (finding.fix.applicability == "safe" or self.unsafe_fixes)
