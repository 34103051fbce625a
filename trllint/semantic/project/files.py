"""A project's files, found by a bounded walk of its tree: the launch model's configs and
scripts, and the project's Python modules.

The walk skips hidden folders, virtual environments, installed packages, and nested projects
(a folder with its own ``.git``), and stops at fixed bounds, so a data-heavy tree costs little.
A folder with no project marker (a script in ``/tmp`` or in Downloads) has a far smaller budget,
and a folder that would overrun it is passed over: a large one holds other programs' files, and
listing it would cost more than the lint.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from trllint.semantic.project.resolution import PROJECT_MARKERS

# Makefiles hold launch commands; they have no suffix.
_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "dist-packages", "__pycache__", "wandb", "mlruns"})
# Bounds of one project's walk: entries looked at, files read, and the size of a file read.
MAX_ENTRIES = 20_000
MAX_FILES_READ = 2_000
MAX_FILE_BYTES = 256_000
# Where the root is no project (no marker, no package): the entries a loose script's folder and
# the folders below it may hold in all, the entries listed to find out, and the files read.
LOOSE_MAX_ENTRIES = 500
LOOSE_MAX_LISTED = 2_000
LOOSE_MAX_FILES_READ = 50


def project_files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The project's files whose names end with ``suffixes`` (or are Makefiles), within bounds."""
    if not _is_project(root):
        return _loose_files(root, suffixes)
    found: list[Path] = []
    seen = 0
    pending = [root]
    while pending and seen < MAX_ENTRIES and len(found) < MAX_FILES_READ:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES or len(found) >= MAX_FILES_READ:
                break  # a data folder of many files: the bounds hold within a folder too
            _take(entry, suffixes, pending, found)
    return found


def _loose_files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The files of a folder that is no project, within a small budget of entries. A folder that
    would overrun it is passed over (a loose folder as large as ``/tmp`` holds other programs'
    files; a data folder beside the script holds no launch file). Folders are listed lazily, so
    one passed over costs the entries up to what is left of the budget, not all of them."""
    found: list[Path] = []
    left = LOOSE_MAX_ENTRIES  # entries of the folders read
    listed = 0  # entries listed, of folders read or passed over: the walk's whole cost
    pending = [root]
    while pending and listed < LOOSE_MAX_LISTED:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(itertools.islice(listing, left + 1))
        except OSError:
            continue
        listed += len(entries)
        if len(entries) > left:
            continue
        left -= len(entries)
        for entry in sorted(entries, key=lambda e: e.name):
            _take(entry, suffixes, pending, found)
    return found[:LOOSE_MAX_FILES_READ]


def _take(entry: os.DirEntry[str], suffixes: tuple[str, ...], pending: list[Path], found: list[Path]) -> None:
    """A folder to walk into (``pending``), a file that is wanted (``found``), or neither."""
    name = entry.name
    try:
        if entry.is_dir(follow_symlinks=False):
            if not (name.startswith(".") or name in _SKIPPED_FOLDERS or _another_project(Path(entry.path))):
                pending.append(Path(entry.path))
        elif entry.is_file(follow_symlinks=False) and (name.endswith(suffixes) or name in _MAKEFILES):
            found.append(Path(entry.path))
    except OSError:
        pass


def _is_project(root: Path) -> bool:
    """A project's tree (it has a marker) or a package's (``project_scope`` of an installed or
    unpacked package), rather than a folder that only happens to hold the script."""
    return (root / "__init__.py").is_file() or any((root / marker).exists() for marker in PROJECT_MARKERS)


def _another_project(folder: Path) -> bool:
    """A nested checkout or a virtual environment: not this project's files."""
    return (folder / ".git").exists() or (folder / "pyvenv.cfg").exists()
