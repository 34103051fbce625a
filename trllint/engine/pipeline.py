"""One file's bytes in, its findings (and, when fixed, its new bytes) out: no processes, no files,
no process-wide state, so a run's pool, standard input and an editor's buffer all come here.

The file's kind (``trllint.engine.inputs.kind_for``) decodes the bytes into the source the rules
read, places each finding back in the file (a notebook's cell) and encodes the fixed source.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from trllint.core.findings import INTERNAL_ERROR, PARSE_ERROR, Finding, describe_failure, engine_finding
from trllint.engine.inputs import EncodeError, Unreadable, kind_for
# What a file's run gives back, in a module that imports no LibCST (a warm run reads only it).
from trllint.engine.results import FileResult, Mode
from trllint.engine.lint import lint_source
from trllint.rule.ruleset import RuleSet
from trllint.semantic.model import SemanticModel
from trllint.facts.launch.model import launch_dependencies
from trllint.semantic.project.file_view import consulted_modules

if TYPE_CHECKING:
    from trllint.engine.noqa import NoqaOutcome



def lint_bytes(data: bytes, filename: str, ruleset: RuleSet, *, display: str | None = None, path: Path | None = None) -> FileResult:
    """The findings in one file's bytes. ``filename``: the file's name, no folder (``x.py``,
    ``x.ipynb``, ``requirements.txt``), which picks its kind and the rules that read it;
    ``display``: the path findings name; ``path``: where it lives (its project's other modules
    are read from there)."""
    return process_bytes(data, display or filename, filename, ruleset, Mode(), path)[0]


def fix_bytes(
    data: bytes,
    filename: str,
    ruleset: RuleSet,
    *,
    unsafe: bool = False,
    diff: bool = False,
    display: str | None = None,
    path: Path | None = None,
) -> tuple[FileResult, bytes | None]:
    """One file fixed: what remains, and the new bytes when a fix changed them (``diff``: the
    result also holds the unified diff)."""
    return process_bytes(data, display or filename, filename, ruleset, Mode(fix=True, diff=diff, unsafe=unsafe), path)


def process_bytes(
    data: bytes, display: str, filename: str, ruleset: RuleSet, mode: Mode, path: Path | None = None
) -> tuple[FileResult, bytes | None]:
    """Lint or fix one file's bytes; the second value is the new content when it changed.

    Whatever goes wrong inside the engine on this file becomes a TRL999 finding for it, so the
    other files of the run are still linted and nothing is written for this one.
    """
    try:
        return _process_bytes(data, display, filename, ruleset, mode, path)
    except Exception as exc:
        message = f"trllint failed on this file: {describe_failure(exc)}; please report it"
        return FileResult(display, findings=[engine_finding(INTERNAL_ERROR, display, message)]), None


def _process_bytes(
    data: bytes, display: str, filename: str, ruleset: RuleSet, mode: Mode, path: Path | None
) -> tuple[FileResult, bytes | None]:
    kind = kind_for(filename)
    result = FileResult(display)
    if ruleset.too_large(len(data), kind.size_factor):
        result.warnings.append(too_large(len(data), ruleset, kind.size_factor))
        return result, None
    try:
        decoded = kind.decode(data, display, filename, path, target=ruleset.target)
    except Unreadable as exc:
        if ruleset.reports_syntax_errors(display):
            result.findings.append(engine_finding(PARSE_ERROR, display, str(exc)))
        return result, None
    if decoded is None:  # nothing in it is for the rules (a notebook of another language)
        return result, None
    if decoded.target is not None and decoded.target != ruleset.target:
        ruleset = replace(ruleset, target=decoded.target)
    source = decoded.source
    if ruleset.too_large(len(source.text)):  # a notebook's program, past the limit its bytes have
        result.warnings.append(too_large(len(source.text), ruleset))
        return result, None
    unlinted = decoded.unlinted if ruleset.reports_syntax_errors(display) else []
    if not mode.rewrites:
        result.findings = sorted(
            (decoded.map_back(f) for f in unlinted + lint_source(source, decoded.linted_as, ruleset)), key=Finding.sort_key
        )
        if isinstance(source.model, SemanticModel) and source.path is not None:
            result.dependencies = file_dependencies(source.model)
        if not mode.keep_until_exit:
            source.release()
        return result, None
    from trllint.engine.fix_loop import fix_source  # only --fix and --diff need it

    outcome = fix_source(source, decoded.linted_as, ruleset, unsafe=mode.unsafe)
    result.problems.extend(outcome.problems)
    findings = outcome.findings
    new_bytes = None
    if outcome.changed:
        try:
            new_bytes = decoded.encode(outcome.text)
        except EncodeError as exc:
            result.problems.append(str(exc))
            findings = lint_source(source, decoded.linted_as, ruleset)  # nothing is written: all still stand
        else:
            result.fixed = outcome.applied
            result.fixed_codes = outcome.applied_codes
            result.unsafe_applied = [decoded.map_back(f) for f in outcome.unsafe_applied]
    result.findings = sorted((decoded.map_back(f) for f in unlinted + findings), key=Finding.sort_key)
    if new_bytes is not None and mode.diff:
        result.diff = unified_diff(*decoded.diff_texts(outcome.text, new_bytes), display)
    return result, new_bytes


def file_dependencies(model: SemanticModel) -> dict[str, str]:
    """The project files whose content the file's findings stand on (path, or a launch key, ->
    digest): its cached result holds while they are unchanged."""
    return {**consulted_modules(model), **launch_dependencies(model)}


def add_noqa_bytes(data: bytes, display: str, filename: str, ruleset: RuleSet) -> tuple[NoqaOutcome, bytes | None]:
    """``--add-noqa`` on one file's bytes: what was added or not, and the new bytes when changed."""
    from trllint.engine.noqa import NoqaOutcome, check_silenced, with_noqa_comments

    outcome = NoqaOutcome()
    kind = kind_for(filename)
    try:
        decoded = kind.decode(data, display, filename, target=ruleset.target)
    except Unreadable as exc:
        outcome.skipped.append((engine_finding(PARSE_ERROR, display, str(exc)), "the file cannot be read"))
        return outcome, None
    if decoded is None:
        return outcome, None
    source = decoded.source
    new_text = with_noqa_comments(source, lint_source(source, decoded.linted_as, ruleset), outcome)
    new_bytes = None
    if new_text != source.text:
        reason = kind.validate(source, new_text)
        if reason is not None:
            outcome.problems.append(f"no comment added: {reason}; please report it")
            outcome.added = 0
            return outcome, None
        check_silenced(source, new_text, decoded.linted_as, ruleset, outcome)
        try:
            new_bytes = decoded.encode(new_text)
        except EncodeError as exc:
            outcome.problems.append(str(exc))
            outcome.added = 0
    outcome.skipped = [(decoded.map_back(f), why) for f, why in outcome.skipped]
    return outcome, new_bytes


def unified_diff(old: str, new: str, display: str) -> str:
    import difflib  # only --diff needs it; start-up stays light

    return "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=display, tofile=display)
    )


def too_large(size: int, ruleset: RuleSet, size_factor: int = 1) -> str:
    """What a file past the size limit gets: a warning, not a finding (it fails no gate)."""
    limit = ruleset.max_file_bytes * size_factor / 2**20
    return (
        f"not linted: {size / 2**20:.1f} MB, over the {limit:g} MB limit (generated code? exclude it, "
        "or raise max-file-size-mb in the configuration; 0 lints every size)"
    )
