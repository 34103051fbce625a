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
import sys
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
        too_deep, cpython_error = _cpython_verdict(source)
        if too_deep is not None:
            return [too_deep]
        try:
            source.module
        except cst.ParserSyntaxError as exc:
            if cpython_error is not None:
                return [cpython_error]  # CPython's line and wording are the ones users know
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
            try:
                rule = rule_class(source, ruleset.settings_for(rule_class))
                rule.filename = filename
                rule.lint_text()
            except Exception as exc:  # a rule bug must not end the run
                findings.append(_internal_error(source, rule_class, exc))
                continue
            findings.extend(_checked_findings(source, rule))
    return sorted(_without_suppressed(findings, source), key=Finding.sort_key)


# CPython's own limits on nesting. Past them LibCST's native parser can overflow the C stack
# (a segmentation fault that ends the whole run) or take minutes, so CPython decides first.
_DEPTH_ERRORS = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many statically nested")


def _cpython_verdict(source: SourceFile) -> tuple[Finding | None, Finding | None]:
    """CPython's parser on the file first: (too deep for LibCST, CPython's syntax error).

    Source nested too deeply is TRL000 without asking LibCST. Other syntax errors are left to
    LibCST, which reads grammar newer than the running interpreter; when it fails too, CPython's
    message is the one reported.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            tree = compile(source.text, source.display_path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        finding = engine_finding(
            PARSE_ERROR, source.display_path, f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1
        )
        if any(marker in (exc.msg or "") for marker in _DEPTH_ERRORS):
            return finding, finding
        return None, finding
    except (RecursionError, MemoryError):
        return engine_finding(PARSE_ERROR, source.display_path, "source nests too deeply to parse"), None
    except ValueError as exc:
        return engine_finding(PARSE_ERROR, source.display_path, f"cannot parse: {exc}"), None
    source.facts["cpython_tree"] = tree  # statement lines for trllint.positions
    return None, None


def _syntax_check(source: SourceFile) -> list[Finding]:
    too_deep, error = _cpython_verdict(source)
    finding = too_deep or error
    return [finding] if finding is not None else []


def _run_visitors(source: SourceFile, rules: list[type[Rule]], ruleset: RuleSet) -> list[Finding]:
    try:
        instances = [rule(source, ruleset.settings_for(rule)) for rule in rules]
        _traverse(source, instances)
    except Exception:
        failure = _last_exception()
        if isinstance(failure, RecursionError) and _too_deep_to_traverse(source):
            return [engine_finding(PARSE_ERROR, source.display_path, "source nests too deeply to analyse")]
        if len(rules) == 1:
            return [_internal_error(source, rules[0], failure)]
        # Find the rule that failed by running each alone; keep the others' findings.
        findings: list[Finding] = []
        for rule_class in rules:
            try:
                alone = rule_class(source, ruleset.settings_for(rule_class))
                _traverse(source, [alone])
            except Exception as exc:
                findings.append(_internal_error(source, rule_class, exc))
            else:
                findings.extend(_checked_findings(source, alone))
        return findings
    return [f for rule in instances for f in _checked_findings(source, rule)]


def _too_deep_to_traverse(source: SourceFile) -> bool:
    """Whether the engine's own traversal, with no rule at all, runs out of recursion."""
    try:
        _traverse(source, [])
    except RecursionError:
        return True
    return False


def _checked_findings(source: SourceFile, rule: Rule) -> list[Finding]:
    """The rule's findings, with a fix whose edits fall outside the file turned into a TRL999.

    Applying such an edit would splice text at the wrong place; the fix loop trusts its offsets.
    """
    size = len(source.text)
    checked: list[Finding] = []
    for finding in rule.findings:
        fix = finding.fix
        if fix is not None and (
            not fix.edits
            or fix.applicability not in ("safe", "unsafe")
            or not all(0 <= e.start <= e.end <= size and isinstance(e.content, str) for e in fix.edits)
        ):
            problem = ValueError(f"its fix at line {finding.line} has an edit outside the file or no edit at all")
            checked.append(_internal_error(source, type(rule), problem))
            continue
        checked.append(finding)
    return checked


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
    return sys.exc_info()[1]  # type: ignore[return-value]


def describe_failure(exc: BaseException | None, prefer_file: str | None = None) -> str:
    """``Type: message at file.py:line`` on one line, whatever the exception says; the line is
    the last one in ``prefer_file`` when the traceback passes through it."""
    where = ""
    if exc is not None and exc.__traceback__ is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        own = [f for f in frames if prefer_file and f.filename == prefer_file]
        frame = (own or frames)[-1]
        where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
    return " ".join(f"{type(exc).__name__}: {exc}".split()) + where


def _internal_error(source: SourceFile, rule: type[Rule], exc: BaseException | None) -> Finding:
    # The rule's own line says more than the LibCST frame the exception surfaced in.
    rule_file = getattr(sys.modules.get(rule.__module__), "__file__", None)
    return engine_finding(
        INTERNAL_ERROR,
        source.display_path,
        f"rule {rule.code} ({rule.name}) failed on this file: {describe_failure(exc, rule_file)}; please report it",
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
