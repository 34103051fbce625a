"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""

from __future__ import annotations

from trllint.report.run_report import RunReport


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: RunReport) -> str:
    lines = [
        f"::error file={_escape_property(f.path)},line={f.line},col={f.column},"
        f"endLine={f.end_line},endColumn={f.end_column},title={_escape_property(f.code)}::"
        f"{_escape_data(f'{f.code} ' + (f'cell {f.cell}: ' if f.cell is not None else '') + f.message)}"
        for f in report.findings
    ]
    return "".join(line + "\n" for line in lines)
