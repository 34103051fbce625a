"""Linting one file: a text prefilter, one parse, one metadata computation, one traversal.

Every selected rule that could match the file runs in the same batched LibCST traversal, then
each rule's ``check_module`` (a rule that declares only that hook stays out of the traversal,
which is skipped when no rule visits nodes). A rule that raises is isolated: the others are
re-run without it and the failure becomes a TRL999 finding that names the rule, so one bad rule
never hides the rest.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import ExitStack
from dataclasses import replace

from libcst.metadata import MetadataWrapper

from trllint.core.cst import walk
from trllint.core.findings import INTERNAL_ERROR, PARSE_ERROR, Finding, describe_failure, engine_finding
from trllint.rule.metadata import LAZY_METADATA, resolve_provider, rule_metadata_dependencies
from trllint.rule.base import Rule
from trllint.rule.ruleset import RuleSet
from trllint.semantic.model import SemanticModel
from trllint.core.source import SourceFile
from trllint.core.suppression import NoqaDirectives, noqa_directives, unused_noqa, without_suppressed
from trllint.rule.registry import available_rules
from trllint.core.syntax import cpython_verdict, libcst_error, syntax_error
from trllint.engine.inputs import Unreadable, kind_for
from trllint.engine.inputs.text import decode_text

# Tests (and rules in progress elsewhere) import these from here.
__all__ = ["INTERNAL_ERROR", "PARSE_ERROR", "RuleSet", "describe_failure", "engine_finding", "lint_source", "read_source"]


def read_source(data: bytes, display_path: str, filename: str) -> SourceFile | Finding:
    """Decode a file as text (as Python when its kind is), or the TRL000 finding that says why it
    cannot be read as text."""
    try:
        return decode_text(data, display_path, is_python=kind_for(filename).is_python)
    except Unreadable as exc:
        return engine_finding(PARSE_ERROR, display_path, str(exc))


def lint_source(source: SourceFile, filename: str, ruleset: RuleSet) -> list[Finding]:
    """All findings in one file, noqa comments applied, sorted by position."""
    rules = ruleset.for_file(source.display_path, filename, source.text, source)
    reports_syntax = ruleset.reports_syntax_errors(source.display_path)
    if not rules:
        # No rule could match, so LibCST is spared (unless CPython rejects the file); a broken
        # file is still reported whatever rules are selected.
        if source.is_python and kind_for(filename).always_read and reports_syntax:
            error = syntax_error(source, ruleset.target)
            if error is not None:
                return [error]
        return _noqa_applied([], source, ruleset)
    findings: list[Finding] = []
    if source.is_python:
        verdict = cpython_verdict(source, target=ruleset.target)
        if verdict.too_deep is not None:
            return [verdict.too_deep] if reports_syntax else []
        error = libcst_error(source, verdict)
        if error is not None:
            return [error] if reports_syntax else []
        if verdict.newer is not None and reports_syntax:
            findings.append(verdict.newer)  # it parses: the rules still read it
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
    return _noqa_applied(findings, source, ruleset)


def _noqa_applied(findings: list[Finding], source: SourceFile, ruleset: RuleSet) -> list[Finding]:
    """The findings the file's noqa comments leave, with TRL100 for the codes that silence nothing."""
    checks_unused = not ruleset.ignore_noqa and ruleset.reports_unused_noqa(source.display_path)
    if not findings and not checks_unused:
        return []
    directives = NoqaDirectives({}) if ruleset.ignore_noqa else noqa_directives(source)
    if directives.lines and checks_unused:
        # Before the preview filter: a code that silences a preview finding is in use.
        ignored = ruleset.codes_ignored_for(source.display_path)
        enabled = frozenset(r.code for r in ruleset.rules if r.code not in ignored)
        known = frozenset(available_rules()) | {PARSE_ERROR[0], INTERNAL_ERROR[0]}
        findings = findings + unused_noqa(findings, source, directives.lines, enabled=enabled, known=known)
    if not ruleset.preview:
        # Before noqa and the fix loop (which reads these findings): a preview finding off preview
        # is neither shown, nor fixed, nor given a noqa comment.
        findings = [f for f in findings if not f.preview]
    if ruleset.unfixable:
        findings = [replace(f, fix=None) if f.fix is not None and f.code in ruleset.unfixable else f for f in findings]
    if ruleset.ignore_noqa:
        return sorted(findings, key=Finding.sort_key)
    return sorted(without_suppressed(findings, source, directives), key=Finding.sort_key)


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
    findings = [f for rule in instances for f in _checked_findings(source, rule)]
    for rule in instances:
        rule.release()
    return findings


def _too_deep_to_traverse(source: SourceFile) -> bool:
    """Whether the engine's own traversal, with no rule at all, runs out of recursion."""
    try:
        walk.visit_batched(source.module, [])
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
            visiting = [rule for rule in instances if rule.visits_nodes()]
            if visiting:
                walk.visit_batched(source.module, visiting)
            checking = [rule for rule in instances if rule.checks_module()]
            if checking:
                model = SemanticModel.of(source)
                for rule in checking:
                    rule.check_module(model)


def _last_exception() -> BaseException:
    return sys.exc_info()[1]  # type: ignore[return-value]


def _internal_error(source: SourceFile, rule: type[Rule], exc: BaseException | None) -> Finding:
    # The rule's own line says more than the LibCST frame the exception surfaced in.
    rule_file = getattr(sys.modules.get(rule.__module__), "__file__", None)
    return engine_finding(
        INTERNAL_ERROR,
        source.display_path,
        f"rule {rule.code} ({rule.name}) failed on this file: {describe_failure(exc, rule_file)}; please report it",
    )
