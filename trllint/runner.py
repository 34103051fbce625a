"""Linting one file: a text prefilter, one parse, one metadata computation, one traversal.

Every selected rule that could match the file runs in the same batched LibCST traversal. A rule
that raises is isolated: the others are re-run without it and the failure becomes a TRL999
finding that names the rule, so one bad rule never hides the rest.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import traceback
import warnings
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from trllint.analysis import walk
from trllint.rule import LAZY_METADATA, Finding, Rule, resolve_provider, rule_metadata_dependencies
from trllint.source import SourceDecodeError, SourceFile

PARSE_ERROR = ("TRL000", "unreadable-or-invalid-source")
INTERNAL_ERROR = ("TRL999", "internal-error")

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


@dataclass
class RuleSet:
    """The rules of a run with their settings, ready to instantiate per file."""

    rules: list[type[Rule]]
    settings: dict[str, Any] = field(default_factory=dict)
    # per-file-ignores: (glob relative to root, codes it switches off)
    per_file_ignores: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    root: Path = field(default_factory=Path.cwd)
    # Off only to prove the prefilter changes nothing (tests, TRLLINT_NO_PREFILTER=1): every rule
    # then parses every file it reads.
    use_prefilter: bool = field(default_factory=lambda: os.environ.get("TRLLINT_NO_PREFILTER", "") in ("", "0"))

    def file_patterns(self) -> tuple[str, ...]:
        # Python files are always read: one that does not parse is a TRL000 whatever is selected.
        patterns: list[str] = ["*.py"]
        for rule in self.rules:
            patterns.extend(p for p in rule.file_patterns if p not in patterns)
        return tuple(patterns)

    def for_file(self, path: str, filename: str, text: str) -> list[type[Rule]]:
        ignored = self.codes_ignored_for(path)
        return [
            r
            for r in self.rules
            if r.code not in ignored
            and r.reads_file(filename)
            and (not self.use_prefilter or r.may_match(text, self.settings_for(r)))
        ]

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

    def settings_for(self, rule: type[Rule]) -> dict[str, Any]:
        return {k: v for k, v in self.settings.items() if k in rule.settings_schema}


def engine_finding(kind: tuple[str, str], source_path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=kind[0],
        name=kind[1],
        message=message,
        path=source_path,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        internal=True,
    )


def read_source(data: bytes, display_path: str, filename: str) -> SourceFile | Finding:
    """Decode a file, or the TRL000 finding that says why it cannot be read as text."""
    try:
        return SourceFile.from_bytes(data, display_path, is_python=filename.endswith((".py", ".pyi")))
    except SourceDecodeError as exc:
        return engine_finding(PARSE_ERROR, display_path, f"cannot decode file: {exc}")


def lint_source(source: SourceFile, filename: str, ruleset: RuleSet) -> list[Finding]:
    """All findings in one file, noqa comments applied, sorted by position."""
    rules = ruleset.for_file(source.display_path, filename, source.text)
    if not rules:
        # No rule could match, so LibCST is spared; CPython's parser, ~30x faster, still makes
        # sure a broken file is reported whatever rules are selected.
        return _syntax_check(source) if source.is_python and filename.endswith(".py") else []
    findings: list[Finding] = []
    if source.is_python:
        try:
            source.module
        except cst.ParserSyntaxError as exc:
            # CPython's verdict first, so that a broken file gets the same finding whether or not
            # the prefilter spared LibCST (only LibCST's own grammar gaps keep LibCST's message).
            if filename.endswith(".py"):
                cpython = _syntax_check(source)
                if cpython:
                    return cpython
            return [
                engine_finding(
                    PARSE_ERROR,
                    source.display_path,
                    f"syntax error: {exc.message}",
                    exc.raw_line,
                    exc.raw_column + 1,
                )
            ]
        except RecursionError:
            return [engine_finding(PARSE_ERROR, source.display_path, "source nests too deeply to parse")]
        findings.extend(_run_visitors(source, rules, ruleset))
    else:
        for rule_class in rules:
            rule = rule_class(source, ruleset.settings_for(rule_class))
            rule.filename = filename
            try:
                rule.lint_text()
            except Exception as exc:  # a rule bug must not end the run
                findings.append(_internal_error(source, rule_class, exc))
                continue
            findings.extend(rule.findings)
    return sorted(_without_suppressed(findings, source), key=Finding.sort_key)


def _syntax_check(source: SourceFile) -> list[Finding]:
    try:
        compile(source.text, source.display_path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return [
            engine_finding(
                PARSE_ERROR, source.display_path, f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1
            )
        ]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [engine_finding(PARSE_ERROR, source.display_path, f"cannot parse: {exc}")]
    return []


def _run_visitors(source: SourceFile, rules: list[type[Rule]], ruleset: RuleSet) -> list[Finding]:
    instances = [rule(source, ruleset.settings_for(rule)) for rule in rules]
    try:
        _traverse(source, instances)
    except Exception:
        if len(instances) == 1:
            return [_internal_error(source, rules[0], _last_exception())]
        # Find the rule that failed by running each alone; keep the others' findings.
        findings: list[Finding] = []
        for rule_class in rules:
            alone = rule_class(source, ruleset.settings_for(rule_class))
            try:
                _traverse(source, [alone])
            except Exception as exc:
                findings.append(_internal_error(source, rule_class, exc))
            else:
                findings.extend(alone.findings)
        return findings
    return [f for rule in instances for f in rule.findings]


def _traverse(source: SourceFile, instances: list[Rule]) -> None:
    wrapper = MetadataWrapper(source.module, unsafe_skip_copy=True)
    with warnings.catch_warnings():
        # LibCST's own warnings (deprecated providers, say) are not the user's business.
        warnings.simplefilter("ignore")
        for provider in rule_metadata_dependencies([type(r) for r in instances]) - LAZY_METADATA:
            resolve_provider(wrapper, provider)
        with ExitStack() as stack:
            for rule in instances:
                stack.enter_context(rule.resolve(wrapper))
            walk.visit_batched(source.module, instances)


def _last_exception() -> BaseException:
    import sys

    return sys.exc_info()[1]  # type: ignore[return-value]


def _internal_error(source: SourceFile, rule: type[Rule], exc: BaseException | None) -> Finding:
    where = ""
    if exc is not None and exc.__traceback__ is not None:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
    return engine_finding(
        INTERNAL_ERROR,
        source.display_path,
        f"rule {rule.code} ({rule.name}) failed on this file: {type(exc).__name__}: {exc}{where}; "
        "please report it",
    )


def _without_suppressed(findings: list[Finding], source: SourceFile) -> list[Finding]:
    kept = []
    lines = source.lines
    for finding in findings:
        if finding.internal or not (0 < finding.line <= len(lines)):
            kept.append(finding)
            continue
        match = _NOQA.search(lines[finding.line - 1])
        if match is None:
            kept.append(finding)
            continue
        codes = match.group("codes")
        if codes is not None and finding.code not in {c.strip().upper() for c in codes.split(",")}:
            kept.append(finding)
    return kept
