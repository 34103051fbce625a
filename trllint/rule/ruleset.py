"""The rules of a run with their settings, and which of them read a given file."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trllint.core.findings import PARSE_ERROR, UNUSED_NOQA
from trllint.core.source import DEFAULT_MAX_FILE_BYTES
from trllint.core.target_version import TargetVersion
from trllint.rule.base import Rule
from trllint.rule.declared import file_patterns_read


@dataclass
class RuleSet:
    """The rules of a run with their settings, ready to instantiate per file."""

    rules: list[type[Rule]]
    settings: dict[str, Any] = field(default_factory=dict)
    # per-file-ignores: (glob relative to root, codes it switches off)
    per_file_ignores: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    root: Path = field(default_factory=Path.cwd)
    # Preview on (--preview, preview = true): the rules' preview findings (reported with
    # ``preview=True``) are kept; off, the engine drops them. Which rules run is the selection's
    # business (trllint.app.config leaves preview rules out unless preview is on).
    preview: bool = False
    # Off only to prove the prefilter changes nothing (tests, TRLLINT_NO_PREFILTER=1): every rule
    # then parses every file it reads.
    use_prefilter: bool = field(default_factory=lambda: os.environ.get("TRLLINT_NO_PREFILTER", "") in ("", "0"))
    # The Python version the code must run on: newer syntax is a TRL000. None: any version that
    # LibCST reads (the configuration always names one: trllint.app.config).
    target: TargetVersion | None = None
    # TRL000 is reported unless ignored (``ignore``, or per file): a selection that does not name
    # it still reports a file that does not parse.
    syntax_errors_ignored: bool = False
    # TRL100: report the `# noqa` codes that silence nothing (selected like a rule).
    unused_noqa: bool = False
    # --ignore-noqa: every `# noqa` comment and `# trllint: noqa` line is disregarded.
    ignore_noqa: bool = False
    # Codes whose fixes are neither offered nor applied (``unfixable``, ``fixable``; Ruff's).
    unfixable: frozenset[str] = frozenset()
    # Files larger than this are not linted, with a warning (``max-file-size-mb``; 0: no limit).
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def file_patterns(self) -> tuple[str, ...]:
        return file_patterns_read(self.rules)

    def for_file(self, path: str, filename: str, text: str, source: Any = None) -> list[type[Rule]]:
        """The rules whose prefilter lets the file through. ``source``: the SourceFile, when a
        prefilter may ask about the file's code or its project.

        The costly token, ``Reached``, is asked only where no rule's cheap tokens
        let the file through: once LibCST parses the file for one rule, running another on it costs
        about what asking them would, and a prefilter never changes a finding either way."""
        ignored = self.codes_ignored_for(path)
        rules = [r for r in self.rules if r.code not in ignored and r.reads_file(filename)]
        if not self.use_prefilter:
            return rules
        verdicts = [(r, r.prefilter_verdict(text, self.settings_for(r), source)) for r in rules]
        parsed = any(verdict is True for _, verdict in verdicts)
        chosen: list[type[Rule]] = []
        for rule, verdict in verdicts:
            if verdict is None and not parsed:
                verdict = parsed = rule.may_match(text, self.settings_for(rule), source)
            if verdict is not False:
                chosen.append(rule)
        return chosen

    def codes_ignored_for(self, path: str) -> frozenset[str]:
        if not self.per_file_ignores:
            return frozenset()
        try:
            relative = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            relative = Path(path).as_posix()
        name = Path(path).name
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
                ignored |= codes
        return frozenset(ignored)

    def reports_unused_noqa(self, path: str) -> bool:
        return self.unused_noqa and UNUSED_NOQA[0] not in self.codes_ignored_for(path)

    def too_large(self, size: int, size_factor: int = 1) -> bool:
        return self.max_file_bytes > 0 and size > self.max_file_bytes * size_factor

    def reports_syntax_errors(self, path: str) -> bool:
        return not self.syntax_errors_ignored and PARSE_ERROR[0] not in self.codes_ignored_for(path)

    def settings_for(self, rule: type[Rule]) -> dict[str, Any]:
        return {k: v for k, v in self.settings.items() if k in rule.settings_schema}
