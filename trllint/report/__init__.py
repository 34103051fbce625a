"""Output formats, one module each. A reporter turns a finished run into text for stdout."""

from __future__ import annotations

# What the app builds and hands to render.
from trllint.report.run_report import RuleDoc, RunReport

__all__ = ["FORMATS", "RuleDoc", "RunReport", "render"]

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, report: RunReport) -> str:
    # Each format imported only when asked for.
    if fmt == "json":
        from trllint.report import json

        return json.render(report)
    if fmt == "sarif":
        from trllint.report import sarif

        return sarif.render(report)
    if fmt == "github":
        from trllint.report import github

        return github.render(report)
    from trllint.report import text

    return text.render(report)
