"""Which finding kinds of a rule are on by default.

Each rule folder holds a ``graduation.toml``, written by ``scripts/graduate.py`` from the precision
benchmark's result file (``benchmarks/precision/results.json``) and never by hand::

    stable = ["step-model"]

A kind is stable when its findings on the benchmark's test split meet the graduation bar
(benchmarks/README.md); every other kind of the rule is preview. A rule with no such file, or
none of whose kinds is listed, is preview as a whole.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Mapping

from trllint.rule.declared import FindingKind

FILE_NAME = "graduation.toml"


def stable_kinds(folder: Path, code: str, kinds: Mapping[str, FindingKind]) -> frozenset[str]:
    """The kinds ``folder``'s graduation file lists as stable; a name the rule does not declare,
    or an unproven kind, is a mistake in the file and raises."""
    try:
        data = tomllib.loads((folder / FILE_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return frozenset()
    listed = data.get("stable", [])
    if not isinstance(listed, list) or not all(isinstance(kind, str) for kind in listed):
        raise TypeError(f"{code}: {FILE_NAME}'s `stable` is not a list of kind names")
    for kind in listed:
        if kind not in kinds:
            raise TypeError(f"{code}: {FILE_NAME} lists {kind!r}, which is not one of the rule's kinds")
        if kinds[kind].unproven:
            raise TypeError(f"{code}: {FILE_NAME} lists {kind!r}, which rests on what the code does not show")
    return frozenset(listed)
