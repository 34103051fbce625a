"""Linting (or fixing) a list of files in a pool of worker processes: reading, fixing, writing.

Each file is one independent job, so a failure on one file (unreadable, vanished, read-only)
becomes a problem reported for that path while the others go on.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from trllint.core.findings import INTERNAL_ERROR, PARSE_ERROR, Finding, describe_failure, engine_finding
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source, read_source

# Bigger files are refused rather than parsed: LibCST needs ~0.5 KB of memory and ~40 µs per byte
# of source, so a 5 MB generated file would hold a worker for minutes and gigabytes. The largest
# hand-written files of transformers and DeepSpeed are about 300 KB.
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass
class Mode:
    fix: bool = False
    diff: bool = False
    unsafe: bool = False

    @property
    def rewrites(self) -> bool:
        return self.fix or self.diff


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0
    problems: list[str] = field(default_factory=list)
    diff: str = ""
    unsafe_applied: list[Finding] = field(default_factory=list)  # fixed by an unsafe fix
    new_text: bytes | None = None  # the fixed bytes (returned for standard input only)
    sha256: str | None = None  # of the bytes that were linted, when the cache asked for it (``digest``)
    # Other modules of the project whose summaries the findings read: path -> content hash. A
    # cached result holds only while each of them is unchanged.
    dependencies: dict[str, str] = field(default_factory=dict)


# trllint.app.memory.after_file, in a run of several files (one file alone never imports it).
_after_file: Callable[[], None] | None = None


def _prepare_memory(files: int, rewrites: bool) -> None:
    global _after_file
    from trllint.app import memory

    memory.for_run(files, rewrites)
    if files > 1:
        _after_file = memory.after_file


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
    finally:
        if _after_file is not None:
            _after_file()  # the file's tree is garbage now


def _process_bytes(
    data: bytes, display: str, filename: str, ruleset: RuleSet, mode: Mode, path: Path | None
) -> tuple[FileResult, bytes | None]:
    if filename.endswith(".ipynb"):  # hook: a notebook's code cells are linted as one program
        from trllint.engine.inputs.notebook import process_notebook

        return process_notebook(data, display, filename, ruleset, mode)
    result = FileResult(display)
    if len(data) > MAX_FILE_BYTES:
        result.findings.append(too_large(display, len(data)))
        return result, None
    source = read_source(data, display, filename)
    if isinstance(source, Finding):
        result.findings.append(source)
        return result, None
    source.path = path
    if not mode.rewrites:
        result.findings = lint_source(source, filename, ruleset)
        if source.model is not None:
            result.dependencies = source.model.consulted_modules()
        source.release()
        return result, None
    from trllint.engine.fix_loop import fix_source  # only --fix and --diff need it (and tomllib with it)

    outcome = fix_source(source, filename, ruleset, unsafe=mode.unsafe)
    result.findings = outcome.findings
    result.problems.extend(outcome.problems)
    if not outcome.changed:
        return result, None
    try:
        new_bytes = source.to_bytes(outcome.text)
    except UnicodeEncodeError as exc:
        # A fix brought in a character the file's declared encoding cannot hold (latin-1, say).
        result.problems.append(f"the fixed text cannot be written in the file's encoding {source.encoding} ({exc.reason}); not written")
        result.findings = lint_source(source, filename, ruleset)
        return result, None
    result.fixed = outcome.applied
    result.unsafe_applied = outcome.unsafe_applied
    if mode.diff:
        result.diff = unified_diff(source.text, outcome.text, display)
    return result, new_bytes


def unified_diff(old: str, new: str, display: str) -> str:
    import difflib  # only --diff needs it; start-up stays light

    return "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=display, tofile=display)
    )


def too_large(display: str, size: int) -> Finding:
    return engine_finding(
        PARSE_ERROR,
        display,
        f"file is {size / 2**20:.1f} MB, larger than the {MAX_FILE_BYTES // 2**20} MB limit; not linted "
        "(generated code? list it under extend-exclude in [tool.trllint])",
    )


def process_file(path: Path, display: str, ruleset: RuleSet, mode: Mode, *, digest: bool = True) -> FileResult:
    """Lint or fix one file; ``digest``: also note the SHA-256 of its bytes (the cache keys on it)."""
    try:
        size = path.stat().st_size
        # A notebook's outputs (plots, logs) may be large; its code is what the limit is about.
        if size > MAX_FILE_BYTES * (16 if path.name.endswith(".ipynb") else 1):
            return FileResult(display, findings=[too_large(display, size)])
        data = path.read_bytes()
    except FileNotFoundError:
        return FileResult(display, problems=["the file vanished before it could be read"])
    except IsADirectoryError:
        return FileResult(display, problems=["is a folder, not a file"])
    except OSError as exc:
        return FileResult(display, problems=[f"cannot read: {exc.strerror or exc}"])
    result, new_bytes = process_bytes(data, display, path.name, ruleset, mode, path)
    if digest:
        import hashlib  # a run without the cache never needs it

        result.sha256 = hashlib.sha256(data).hexdigest()
    if new_bytes is not None and mode.fix and not mode.diff:
        from trllint.app.atomic_write import WriteError, write_atomically  # only --fix writes

        try:
            write_atomically(path, new_bytes, expected_old=data)
        except WriteError as exc:
            result.problems.append(str(exc))
            # Nothing was written: the findings the fixes would have removed are still there.
            unfixed = process_bytes(data, display, path.name, ruleset, Mode(), path)[0]
            result.findings = unfixed.findings
            result.fixed = 0
    return result


# Worker processes receive the run's rules once, at start-up, not with every file.
_worker_state: tuple[RuleSet, Mode, bool] | None = None


def _init_worker(ruleset: RuleSet, mode: Mode, digest: bool, files: int) -> None:
    global _worker_state
    _worker_state = (ruleset, mode, digest)
    _prepare_memory(files, mode.rewrites)  # a forked worker inherits it; a spawned one starts afresh


def _work(batch: list[tuple[int, str, str]]) -> list[tuple[int, FileResult]]:
    assert _worker_state is not None
    ruleset, mode, digest = _worker_state
    return [(index, process_file(Path(path), display, ruleset, mode, digest=digest)) for index, path, display in batch]


def _batches(jobs: list[tuple[Path, str]], workers: int) -> list[list[tuple[int, str, str]]]:
    """The jobs in batches of about equal bytes, largest files first.

    Largest first, so that the run does not end with one worker alone on a 300 KB file; batches,
    so that a thousand small files cost a few dozen round trips to the workers, not a thousand.
    """
    sizes = []
    for index, (path, display) in enumerate(jobs):
        try:
            size = path.stat().st_size
        except OSError:
            size = 0  # process_file reports it
        sizes.append((size, index, str(path), display))
    sizes.sort(key=lambda item: (-item[0], item[1]))
    target = max(1, sum(size for size, *_ in sizes) // (workers * 16))
    batches: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    current_bytes = 0
    for size, index, path, display in sizes:
        current.append((index, path, display))
        current_bytes += size
        if current_bytes >= target:
            batches.append(current)
            current, current_bytes = [], 0
    if current:
        batches.append(current)
    return batches


def process_files(
    jobs: list[tuple[Path, str]], ruleset: RuleSet, mode: Mode, *, workers: int, digest: bool = True
) -> list[FileResult]:
    """Each job's result, in the order of ``jobs``, whatever the number of workers."""
    workers = max(1, min(workers, len(jobs)))
    _prepare_memory(len(jobs), mode.rewrites)
    # A pool costs ~100 ms to start: only worth it for more than a handful of files.
    if workers == 1 or len(jobs) < 8:
        return [process_file(path, display, ruleset, mode, digest=digest) for path, display in jobs]
    # Imported here: concurrent.futures brings multiprocessing (~50 ms), which one file never needs.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start with the rules already imported (the platform default elsewhere).
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    results: list[FileResult | None] = [None] * len(jobs)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(ruleset, mode, digest, len(jobs))
    ) as pool:
        for batch in pool.map(_work, _batches(jobs, workers)):
            for index, result in batch:
                results[index] = result
    return results  # type: ignore[return-value]


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
