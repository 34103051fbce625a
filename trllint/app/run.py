"""One run of the linter: find the files, lint or fix them, report, and pick the exit code."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from trllint.app import memory
from trllint.app.config import Config, available_rules
from trllint.app.discovery import DEFAULT_EXCLUDES, discover, display_path
from trllint.app.exit_codes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from trllint.core.findings import UNUSED_NOQA
from dataclasses import dataclass
from trllint.engine.results import FileResult, Mode
from trllint.report import RuleDoc, RunReport, render
from trllint.rule.declared import file_patterns_read

if TYPE_CHECKING:
    from trllint.app.result_cache import ResultCache
    from trllint.rule.ruleset import RuleSet

# The pool, the engine and the rules are imported when a file must be linted: a warm run whose
# every result is in the cache (``from_cache``) imports none of them, nor LibCST.


@dataclass
class LintRun:
    config: Config
    codes: list[str]
    fix: bool = False
    diff: bool = False
    unsafe_fixes: bool = False
    jobs: int | None = None
    use_cache: bool = True
    output_format: str = "text"
    # --output-file: the report goes there instead of standard output (as Ruff's).
    output_file: Path | None = None
    # --exit-non-zero-on-fix: a run that fixed something exits 1 even when nothing remains (Ruff's).
    exit_non_zero_on_fix: bool = False
    statistics: bool = False
    show_evidence: bool = False
    quiet: bool = False
    force_exclude: bool = False
    # --fix-only: fix, and neither report nor fail on what remains (Ruff's).
    fix_only: bool = False
    # --show-fixes: after fixing, each file's fixes by code.
    show_fixes: bool = False
    # --color: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always, never.
    color: str = "auto"
    # -v: what the run found and chose, on standard error.
    verbose: bool = False
    # The rules are described by the rule catalog (trllint.app.rule_catalog): every result may
    # come from the cache without importing them.
    from_cache: bool = False

    @property
    def mode(self) -> Mode:
        return Mode(fix=self.fix, diff=self.diff, unsafe=self.unsafe_fixes)

    def lint_paths(self, paths: list[str]) -> int:
        started = time.perf_counter()
        found, jobs = self._discover(paths)
        if not jobs and not found.missing:
            # Ruff warns too: an empty run is more often a wrong path than a clean tree.
            sys.stderr.write(f"trllint: warning: no file to lint under {', '.join(paths)}\n")
        self._say(f"{len(jobs)} {'file' if len(jobs) == 1 else 'files'} to lint")
        self._forget_earlier_runs()
        cache = self._result_cache()
        results = cache.cached_results(jobs) if cache is not None and self.from_cache else None
        if results is None:
            if self.from_cache:
                from trllint.app.config import use_rule_catalog

                use_rule_catalog(None)  # something is left to lint: the rules themselves from here on
            results = self._process(jobs, self.config.ruleset(self.codes), cache)
        status = self._report(results, paths_missing=len(found.missing))
        self._say(f"done in {time.perf_counter() - started:.2f} s")
        return EXIT_USAGE if found.missing else status

    def show_files(self, paths: list[str]) -> int:
        """--show-files: the files a run would lint, one per line (Ruff's)."""
        found, jobs = self._discover(paths)
        for path in sorted(str(path.absolute()) for path, _ in jobs):
            sys.stdout.write(f"{path}\n")
        return EXIT_USAGE if found.missing else EXIT_CLEAN

    def _say(self, message: str) -> None:
        if self.verbose:
            sys.stderr.write(f"trllint: {message}\n")

    def add_noqa(self, paths: list[str]) -> int:
        from trllint.app.add_noqa import add_noqa
        from trllint.app.pool import default_jobs

        ruleset = self.config.ruleset(self.codes)
        found, jobs = self._discover(paths)
        status = add_noqa(jobs, ruleset, workers=self.jobs or default_jobs())
        return EXIT_USAGE if found.missing else status

    def _discover(self, paths: list[str]):
        excludes = list(self.config.exclude if self.config.exclude is not None else DEFAULT_EXCLUDES)
        excludes += self.config.extend_exclude
        rules = available_rules()
        patterns = file_patterns_read(rules[code].rule for code in self.codes if code in rules)
        found = discover(paths, patterns, excludes=excludes, root=self.config.root, force_exclude=self.force_exclude)
        for raw, reason in found.missing:
            sys.stderr.write(f"trllint: error: {raw}: {reason}\n")
        cwd = Path.cwd()
        return found, [(path, display_path(path, cwd)) for path in found.files]

    def _forget_earlier_runs(self) -> None:
        """What a run earlier in this process read of files that may have changed since."""
        # Only a process that has read launch files holds them (importing the reader costs
        # hashlib on every run).
        launch_files = sys.modules.get("trllint.facts.launch.project")
        if launch_files is not None:
            launch_files.forget_launch_files()
        if self.use_cache:
            from trllint.semantic.project.index import use_cache_folder

            # Summaries of imported project modules are kept beside the results (set before the
            # workers fork, so they inherit it); the indexes of an earlier run are dropped.
            use_cache_folder(self.config.cache_folder())

    def _result_cache(self) -> ResultCache | None:
        """The run's result cache: only a run that lints (fixes rewrite files) reads and writes it."""
        if not self.use_cache or self.mode.rewrites:
            return None
        from trllint.app.result_cache import ResultCache

        cache = ResultCache.for_run(self.config, self.codes)
        if cache is not None:
            self._say(f"result cache: {cache.file}")
        return cache

    def _process(self, jobs, ruleset: RuleSet, cache: ResultCache | None = None) -> list[FileResult]:
        from trllint.app.pool import default_jobs, process_files

        workers = self.jobs or default_jobs()
        if cache is not None:
            return cache.process(jobs, ruleset, self.mode, workers=workers)
        return process_files(jobs, ruleset, self.mode, workers=workers, digest=False)

    def lint_stdin(self, filename: str) -> int:
        ruleset = self.config.ruleset(self.codes)
        data = sys.stdin.buffer.read()
        # A bare `-` is Python, as in Ruff; --stdin-filename says otherwise (a notebook, a requirements file).
        linted_as = "stdin.py" if filename == "-" else Path(filename).name
        from trllint.engine.pipeline import process_bytes

        memory.for_run(1, self.mode.rewrites)
        result, new_bytes = process_bytes(data, filename, linted_as, ruleset, self.mode)
        if self.fix and not self.diff:
            # The fixed source goes to stdout (editors replace the buffer with it); findings to stderr.
            sys.stdout.buffer.write(new_bytes if new_bytes is not None else data)
            sys.stdout.flush()
            return self._report([result], stream=sys.stderr)
        return self._report([result])

    def _report(self, results: list[FileResult], stream=None, paths_missing: int = 0) -> int:
        if stream is None and self.output_file is not None:
            buffer = io.StringIO()
            code = self._report(results, stream=buffer, paths_missing=paths_missing)
            try:
                self.output_file.write_text(buffer.getvalue(), encoding="utf-8")
            except OSError as exc:
                sys.stderr.write(f"trllint: cannot write the report to {self.output_file}: {exc.strerror or exc}\n")
                return EXIT_USAGE
            return code
        stream = stream or sys.stdout
        findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
        problems = [(r.path, p) for r in results for p in r.problems]
        for path, problem in problems:
            sys.stderr.write(f"trllint: error: {path}: {problem}\n")
        for result in results:
            for warning in result.warnings:
                sys.stderr.write(f"trllint: warning: {result.path}: {warning}\n")
        if self.fix_only and not self.diff:
            return self._report_fixes_only(results, stream, problems)
        report = RunReport(
            findings=findings,
            rules={
                code: RuleDoc(code, info.rule.name, info.rule.message, info.rule.fixable, info.readme, info.rule.status)
                for code, info in available_rules().items()
                if code in self.codes
            },
            fixed=sum(r.fixed for r in results),
            fix_mode=self.fix and not self.diff,
            unsafe_fixes=self.unsafe_fixes,
            statistics=self.statistics,
            show_evidence=self.show_evidence,
            quiet=self.quiet,
            paths_missing=paths_missing,
            color=self.output_format == "text" and self._colored(stream),
        )
        if self.output_format == "text" and (self.fix or self.diff):
            # Why each unsafe fix is unsafe, applied or waiting for --unsafe-fixes (the diff hides it).
            for finding in sorted((f for r in results for f in r.unsafe_applied), key=lambda f: f.sort_key()):
                assert finding.fix is not None  # it was applied, so it has one
                why = f": {finding.fix.reason}" if finding.fix.reason else ""
                sys.stderr.write(f"{finding.path}:{finding.line}:{finding.column}: {finding.code} unsafe fix applied{why}\n")
            if self.diff:
                for finding in findings:
                    if finding.fix is not None and finding.fix.applicability == "unsafe" and finding.fix.reason:
                        sys.stderr.write(f"{finding.path}:{finding.line}:{finding.column}: {finding.code} unsafe fix not applied "
                                         f"(--unsafe-fixes): {finding.fix.reason}\n")
        if self.diff:
            diffs = "".join(r.diff for r in results)
            if self.output_format == "json":
                # One JSON document, as every JSON output: each changed file's diff.
                import json

                changed = [{"filename": r.path, "diff": r.diff, "fixes": r.fixed} for r in results if r.diff]
                stream.write(json.dumps(changed, indent=2) + "\n")
            else:
                stream.write(diffs)
                fixable = sum(r.fixed for r in results)
                sys.stderr.write(f"Would fix {fixable} {'finding' if fixable == 1 else 'findings'}.\n")
            return EXIT_FINDINGS if diffs or findings or problems else EXIT_CLEAN
        stream.write(render(self.output_format, report))
        if self.show_fixes and report.fix_mode and self.output_format == "text":
            stream.write(_fixes_by_file(results))
        fixed_something = self.exit_non_zero_on_fix and report.fix_mode and report.fixed > 0
        return EXIT_FINDINGS if findings or problems or fixed_something else EXIT_CLEAN

    def _report_fixes_only(self, results: list[FileResult], stream, problems) -> int:
        """--fix-only: what was fixed; what remains is neither shown nor an error."""
        fixed = sum(r.fixed for r in results)
        if self.output_format == "text":
            if not self.quiet:
                stream.write(f"Fixed {fixed} {'finding' if fixed == 1 else 'findings'}.\n" if fixed else "No findings fixed.\n")
            if self.show_fixes:
                stream.write(_fixes_by_file(results))
        else:
            stream.write(render(self.output_format, RunReport(findings=[], rules={}, fixed=fixed, fix_mode=True)))
        return EXIT_FINDINGS if problems or (self.exit_non_zero_on_fix and fixed) else EXIT_CLEAN

    def _colored(self, stream) -> bool:
        if self.color != "auto":
            return self.color == "always"
        if os.environ.get("FORCE_COLOR"):
            return True
        return stream.isatty() and "NO_COLOR" not in os.environ


def _fixes_by_file(results: list[FileResult]) -> str:
    """Ruff's --show-fixes list: each fixed file, then how many fixes of each code it got."""
    from collections import Counter

    names = {code: info.rule.name for code, info in available_rules().items()}
    names[UNUSED_NOQA[0]] = UNUSED_NOQA[1]
    fixed = [r for r in results if r.fixed_codes]
    if not fixed:
        return ""
    total = sum(len(r.fixed_codes) for r in fixed)
    lines = [f"Fixed {total} {'finding' if total == 1 else 'findings'}:"]
    for result in sorted(fixed, key=lambda r: r.path):
        lines.append(f"- {result.path}:")
        for code, count in sorted(Counter(result.fixed_codes).items()):
            lines.append(f"    {count} × {code} ({names.get(code, code)})")
    return "\n".join(lines) + "\n"
