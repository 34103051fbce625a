"""Linting (or fixing) a list of files in a pool of worker processes: reading, fixing, writing.

Each file is one independent job, so a failure on one file (unreadable, vanished, read-only)
becomes a problem reported for that path while the others go on. What a file's bytes hold is
``trllint.engine.pipeline``'s business; this module reads and writes files and spreads them over
processes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Callable, TypeVar

from trllint.engine.inputs import kind_for
from trllint.engine.pipeline import FileResult, Mode, process_bytes, too_large
from trllint.rule.ruleset import RuleSet

Outcome = TypeVar("Outcome")

# trllint.app.memory.after_file, in a run of several files (one file alone never imports it).
_after_file: Callable[[], None] | None = None


def _prepare_memory(files: int, rewrites: bool) -> None:
    global _after_file
    from trllint.app import memory

    memory.for_run(files, rewrites)
    if files > 1:
        _after_file = memory.after_file


def _done_with_file() -> None:
    if _after_file is not None:
        _after_file()  # the file's tree is garbage now


def process_file(path: Path, display: str, ruleset: RuleSet, mode: Mode, *, digest: bool = True) -> FileResult:
    """Lint or fix one file; ``digest``: also note the SHA-256 of its bytes (the cache keys on it)."""
    try:
        size = path.stat().st_size
        size_factor = kind_for(path).size_factor
        if ruleset.too_large(size, size_factor):
            return FileResult(display, warnings=[too_large(size, ruleset, size_factor)])
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


# Starting a pool costs more than linting a few files: only worth it for more than a handful.
POOL_MIN_FILES = 8

# Worker processes receive the job (the run's rules with it) once, at start-up, not with every file.
_worker_job: Callable[[Path, str], object] | None = None


def _init_worker(job: Callable[[Path, str], object], files: int, rewrites: bool, facts_folder: Path | None) -> None:
    global _worker_job
    _worker_job = job
    _prepare_memory(files, rewrites)  # a forked worker inherits it; a spawned one starts afresh
    # Where module facts are cached: a forked worker inherits the parent's folder, a spawned one
    # (macOS, Windows) starts with none and would recompute every imported module's facts.
    from trllint.semantic.project import index as project_index

    if project_index.cache_folder() != facts_folder:
        project_index.use_cache_folder(facts_folder)


def _run_job(job: Callable[[Path, str], Outcome], path: Path, display: str) -> Outcome:
    try:
        return job(path, display)
    finally:
        _done_with_file()


def _work(batch: list[tuple[int, str, str]]) -> list[tuple[int, object]]:
    assert _worker_job is not None
    return [(index, _run_job(_worker_job, Path(path), display)) for index, path, display in batch]


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
            size = 0  # the job reports it
        sizes.append((size, index, str(path), display))
    sizes.sort(key=lambda item: (-item[0], item[1]))
    target = max(1, sum(size for size, *_ in sizes) // (workers * 16))
    batches: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    current_bytes = 0
    for size, index, path_text, display in sizes:
        current.append((index, path_text, display))
        current_bytes += size
        if current_bytes >= target:
            batches.append(current)
            current, current_bytes = [], 0
    if current:
        batches.append(current)
    return batches


def map_files(
    job: Callable[[Path, str], Outcome], jobs: list[tuple[Path, str]], *, workers: int, rewrites: bool
) -> list[Outcome]:
    """``job(path, display)`` for each of ``jobs``, in their order, whatever the number of workers.

    ``job`` must be picklable (a module-level function, or a ``functools.partial`` of one) where
    workers are spawned rather than forked.
    """
    workers = max(1, min(workers, len(jobs)))
    _prepare_memory(len(jobs), rewrites)
    if workers == 1 or len(jobs) < POOL_MIN_FILES:
        return [_run_job(job, path, display) for path, display in jobs]
    # Imported here: concurrent.futures brings multiprocessing, which one file never needs.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from trllint.semantic.project.index import cache_folder

    # fork: the workers start with the rules already imported (the platform default elsewhere).
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    results: list[Outcome | None] = [None] * len(jobs)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker,
        initargs=(job, len(jobs), rewrites, cache_folder()),
    ) as pool:
        for batch in pool.map(_work, _batches(jobs, workers)):
            for index, result in batch:
                results[index] = result  # type: ignore[assignment]  # a worker's `job` is this one: an Outcome
    return results  # type: ignore[return-value]  # the batches cover every index, so no None is left


def process_files(
    jobs: list[tuple[Path, str]], ruleset: RuleSet, mode: Mode, *, workers: int, digest: bool = True
) -> list[FileResult]:
    """Each job's result, in the order of ``jobs``, whatever the number of workers."""
    if len(jobs) == 1:
        from trllint.app import memory

        if memory.exits_unfreed():
            mode = replace(mode, keep_until_exit=True)
    job = partial(process_file, ruleset=ruleset, mode=mode, digest=digest)
    return map_files(job, jobs, workers=workers, rewrites=mode.rewrites)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
