"""Garbage collection for a run that builds and drops a large tree file after file.

A LibCST parse allocates hundreds of thousands of objects, and the analyses leave them in cycles
(a file's semantic model and its source point at each other; so do a rule and its context), so
reference counting frees none of them: CPython's collector does, when its allocation counts say
so, and each full collection walks every object alive, LibCST and the rules included. In a run
of the default corpus that was a fifth of the time. So: what start-up loaded is frozen (never
walked again), collections come less often, and the young generations are collected after each
file that was parsed, when its tree has just become garbage and most of it is still young (a full
collection there would walk every cache of the run each time). On the default corpus in one
process: 121 s and 151 MB at CPython's defaults, 95 s and 174 MB with this.

A run from the command line starts with the collector off (:func:`paused`): the imports of
LibCST and the rules build objects that live as long as the process, and a collection walks them
again and again (a tenth of start-up). A lint of one file keeps it off to the end: the file's
tree and analyses live until the process exits a moment later, so collecting them would be work
for nothing (a seventh of the run on a 3,000-line script). Every other run turns it back on
(:func:`for_run`): many files, each fix round's re-parse, each ``--add-noqa`` file.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

# A parse alone makes more objects than this; the default (700) collects dozens of times in one.
_FIRST_GENERATION_THRESHOLD = 50_000
# [prepared, parses at the last collection]
_state = [False, 0]
# The process ends without freeing its objects (:func:`off_to_the_end`).
_exits_unfreed = False


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for a command-line run (each run turns it on as it needs, see
    :func:`for_run`); as it was afterwards, for a caller in the same process (a test)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def off_to_the_end() -> None:
    """For a process that exits without freeing its objects (``trllint.app.cli.entry``): the
    collector off before the run, so that :func:`paused` has nothing to turn back on. Turned back
    on, it would walk everything a lint of one file built just before the exit (0.04 s after a
    950-line script, 0.09 s after a 6,000-line one). A run that needs it turns it on as before
    (:func:`for_run`)."""
    global _exits_unfreed
    gc.disable()
    _exits_unfreed = True


def exits_unfreed() -> bool:
    """Whether the process ends without freeing its objects (:func:`off_to_the_end` was called)."""
    return _exits_unfreed


def for_run(files: int, rewrites: bool) -> None:
    """The collector for a run of ``files`` files: prepared for many, on for rewriting one (each
    fix round re-parses), left as it is for linting one."""
    if files > 1:
        prepare()
    elif rewrites:
        gc.enable()


def prepare() -> None:
    """Before the first file of a run of several (in the parent before it forks its workers,
    and in each worker). A run of one file exits before any of this pays."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(_FIRST_GENERATION_THRESHOLD, 20, 20)
    gc.enable()
    _state[0] = True


def after_file() -> None:
    """Collect the tree of a file (or an imported module) parsed since the last call: the
    generations it was made in, not the old one."""
    from trllint.core.source import SourceFile  # not at the top: cli imports this module before LibCST

    if _state[0] and SourceFile.parses != _state[1]:
        _state[1] = SourceFile.parses
        gc.collect(1)
