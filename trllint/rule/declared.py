"""What a rule declares as plain data: its settings and the files it reads. Importing it costs
no LibCST and no rule, so that the configuration and the file discovery of a warm run (every
result read from the cache, ``trllint.app.rule_catalog``) work from the same definitions as a
run that imports the rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Protocol

from trllint.core.findings import Fixable, RuleStatus
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """A rule setting read from ``[tool.trllint]``; ``kind`` is the Python type of its value."""

    kind: type
    default: Any
    help: str = ""
    item_kind: type | None = None  # for lists: the type of each element


@dataclass(frozen=True)
class FindingKind:
    """One kind of a rule's findings: the evidence they rest on (a wrap made in the same scope, a
    launch that shows FSDP). Kinds graduate to the default one by one, on the test split's labels
    (``trllint.rule.graduation``); every other kind of a rule is preview."""

    description: str  # a few words, for --explain: "the model a Trainer hands its step methods"
    # The finding rests on what the code does not show (a launch it does not name, a file of no
    # project): such a kind never graduates.
    unproven: bool = False


# The project's line length, for rules whose fixes wrap what they insert. trllint.app.config fills it
# from [tool.trllint], else [tool.ruff], else [tool.black] (Ruff's and Black's default: 88).
LINE_LENGTH_SETTING = Setting(int, 88, "the longest line a fix may write; longer inserted calls are wrapped")


class DeclaredRule(Protocol):
    """What a run reads of a rule before linting: a ``Rule`` class's attributes, or the rule's card
    in the rule catalog (``trllint.app.rule_catalog.RuleCard``)."""

    @property
    def name(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def fixable(self) -> Fixable: ...
    @property
    def status(self) -> RuleStatus: ...
    @property
    def preview_findings(self) -> str: ...
    @property
    def file_patterns(self) -> tuple[str, ...]: ...
    @property
    def settings_schema(self) -> dict[str, Setting]: ...


class RuleEntry(Protocol):
    """A rule by code: ``trllint.rule.registry.RuleInfo`` or the catalog's entry."""

    @property
    def rule(self) -> DeclaredRule: ...
    @property
    def readme(self) -> Path: ...


def file_patterns_read(rules: Iterable[DeclaredRule]) -> tuple[str, ...]:
    """The file names (fnmatch patterns) a run of ``rules`` reads."""
    # Python files are always read: one that does not parse is a TRL000 whatever is selected.
    patterns: list[str] = ["*.py"]
    for rule in rules:
        patterns.extend(p for p in rule.file_patterns if p not in patterns)
    return tuple(patterns)
