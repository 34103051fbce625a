"""The known-bad releases (``known_bad.toml``) and the version arithmetic on them.

Apart from rule.py so that a run that reads no dependency list never imports packaging.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from dataclasses import dataclass
from trllint.rules.trl005_known_bad_dependency.specifiers import admits_any, raise_lower_bound, version_part

__all__ = ["InvalidRequirement", "KnownBad", "Requirement", "known_bad", "raise_lower_bound", "version_part", "violated_row"]

TABLE = Path(__file__).with_name("known_bad.toml")


@dataclass(frozen=True)
class KnownBad:
    package: str  # canonical name
    bad: SpecifierSet
    first_good: Version
    symptom: str
    reference: str
    # A fact of the project's code the bug needs ("trl-vllm-generation": the project runs TRL's
    # vLLM generation); None when any project that installs the range has it.
    needs: str | None = None
    # A row not yet trusted on unseen code: its findings are preview (shown only with --preview).
    preview: bool = False


@lru_cache(maxsize=1)
def known_bad() -> tuple[KnownBad, ...]:
    with open(TABLE, "rb") as handle:
        rows = tomllib.load(handle)["known-bad"]
    return tuple(
        KnownBad(
            canonicalize_name(row["package"]),
            SpecifierSet(row["bad"]),
            Version(row["first-good"]),
            row["symptom"],
            row["reference"],
            needs=row.get("needs"),
            preview=_flag(row, "preview"),
        )
        for row in rows
    )


def _flag(row: dict, key: str) -> bool:
    value = row.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{TABLE.name}: {row.get('package')}: {key!r} must be true or false, got {value!r}")
    return value


def violated_row(requirement: Requirement) -> KnownBad | None:
    """The first known-bad range this requirement's specifier lets in, if any."""
    name = canonicalize_name(requirement.name)
    for row in known_bad():
        if row.package == name and admits_any(requirement.specifier, row.bad):
            return row
    return None
