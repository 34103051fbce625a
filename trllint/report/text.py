"""``path:line:col: CODE message``, a closing count, and ``--statistics``."""

from __future__ import annotations

from collections import Counter
from typing import Callable

from trllint.core.findings import Evidence, Finding
from trllint.report.run_report import RunReport

_BOLD, _RED, _CYAN, _DIM, _RESET = "\033[1m", "\033[31m", "\033[36m", "\033[2m", "\033[0m"


def render(report: RunReport) -> str:
    if report.statistics:
        return _statistics(report)
    paint = _painter(report.color)
    lines: list[str] = []
    for f in report.findings:
        lines.append(
            f"{paint(f.path, _BOLD)}:{f'cell {f.cell}:' if f.cell is not None else ''}{f.line}:{f.column}: {paint(f.code, _RED)} "
            f"{paint('[*] ', _CYAN) if report.fixable(f) else ''}{f.message}{_unsafe_reason(f)}"
        )
        if report.show_evidence:
            lines.extend(paint(f"    {_where(e)}: {e.message}", _DIM) for e in f.evidence)
    if not report.quiet:
        lines.append(_summary(report))
    if not lines:
        return ""
    return "\n".join(lines) + "\n"


def _where(evidence: Evidence) -> str:
    cell = f"cell {evidence.cell}:" if evidence.cell is not None else ""
    return f"{evidence.path}:{cell}{evidence.line}"


def _unsafe_reason(finding: Finding) -> str:
    fix = finding.fix
    return f" [unsafe fix: {fix.reason}]" if fix is not None and fix.applicability == "unsafe" and fix.reason else ""


def _summary(report: RunReport) -> str:
    remaining = len(report.findings)
    fixable = sum(1 for f in report.findings if report.fixable(f))
    if report.fix_mode and report.fixed:
        return f"Found {remaining + report.fixed} {_plural(remaining + report.fixed)} ({report.fixed} fixed, {remaining} remaining)."
    if not remaining and report.paths_missing:
        missing = report.paths_missing
        return f"No findings in the files found; {missing} {'path was' if missing == 1 else 'paths were'} not found."
    if not remaining:
        return "All checks passed!"
    # As Ruff: the fixes --fix would apply, and apart from them the unsafe ones it would not,
    # so that --fix --unsafe-fixes fixing more than "N fixable" is no surprise.
    hidden = 0 if report.unsafe_fixes else sum(1 for f in report.findings if f.fix is not None and f.fix.applicability == "unsafe")
    hint = ""
    if fixable:
        more = f"; {hidden} more with --unsafe-fixes" if hidden else ""
        hint = f" ({fixable} fixable with --fix{' --unsafe-fixes' if report.unsafe_fixes else ''}{more})"
    elif hidden:
        hint = f" ({hidden} fixable with --fix --unsafe-fixes)"
    return f"Found {remaining} {_plural(remaining)}{hint}."


def _statistics(report: RunReport) -> str:
    counts = Counter(f.code for f in report.findings)
    names = {f.code: f.name for f in report.findings}
    fixable = {f.code for f in report.findings if report.fixable(f)}
    rows = [
        f"{count:>5}\t{code}\t{'[*]' if code in fixable else '   '} {names[code]}"
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(rows + [_summary(report)]) + "\n"


def _plural(n: int) -> str:
    return "finding" if n == 1 else "findings"


def _painter(color: bool) -> Callable[[str, str], str]:
    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    return paint
