"""Real code for tests that compare a cheap computation with LibCST's own: every rule case and
an even sample of the installed trl and accelerate (found with find_spec, never imported)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from trllint.rule.registry import all_rules


def real_code_sample(every: int = 15, max_bytes: int = 30_000) -> list[Path]:
    files: list[Path] = []
    for package in ("trl", "accelerate"):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))
            files += [f for f in found if f.stat().st_size < max_bytes][::every]
    for info in all_rules().values():
        files += sorted((info.folder / "cases").glob("*.py"))
    return files
