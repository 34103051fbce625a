"""Which files a run reads: the paths given, recursed, minus excludes and what git ignores,
plus the notebooks in them and the requirements files their requirements files include.

An explicitly named file is always read (pre-commit names each staged file; a user who names a
file means it). Folders are walked without following symbolic links, so a link loop cannot hang
the walk.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from trllint.engine.inputs import ALWAYS_READ_PATTERNS, kind_for

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "build",
    "dist",
    "__pycache__",
    "node_modules",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".trllint_cache",
)


@dataclass
class Discovered:
    files: list[Path] = field(default_factory=list)
    # Paths named on the command line that could not be used: (path, reason).
    missing: list[tuple[str, str]] = field(default_factory=list)


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` as reports show it: relative to ``cwd`` (the working folder) when under it. A run
    names thousands of files: it passes the folder, asked once."""
    try:
        return path.absolute().relative_to(Path.cwd() if cwd is None else cwd).as_posix()
    except ValueError:
        return str(path)


def _matches_any(path: Path, patterns: tuple[str, ...] | list[str], root: Path) -> bool:
    name = path.name
    try:
        relative = path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        relative = path.as_posix()
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) for p in patterns)


def discover(
    paths: list[str],
    file_patterns: tuple[str, ...],
    *,
    excludes: list[str],
    root: Path,
    respect_gitignore: bool = True,
    force_exclude: bool = False,
) -> Discovered:
    """``force_exclude``: a file named on the command line is skipped when it, or a folder it is
    in, matches an exclude (Ruff's ``--force-exclude``: pre-commit names every staged file, a
    vendored one too)."""
    found = Discovered()
    file_patterns = (*file_patterns, *ALWAYS_READ_PATTERNS)
    walked: list[Path] = []
    explicit: list[Path] = []
    for raw in paths:
        path = Path(raw)
        # One stat for both questions: pre-commit names every staged file, a CI gate whole trees.
        try:
            mode = path.stat().st_mode
        except (OSError, ValueError):
            mode = 0  # as Path.is_dir and is_file read an error: neither
        if stat.S_ISDIR(mode):
            walked.extend(_walk(path, file_patterns, excludes, root))
        elif stat.S_ISREG(mode):
            if not (force_exclude and _excluded(path.absolute(), excludes, root.absolute())):
                explicit.append(path)
        elif path.is_symlink():
            found.missing.append((raw, "broken symbolic link or link loop"))
        elif path.exists():
            found.missing.append((raw, "not a regular file or folder"))
        else:
            found.missing.append((raw, "no such file or folder"))
    if respect_gitignore and walked:
        ignored = _git_ignored(walked)
        walked = [p for p in walked if p not in ignored]
    seen: set[Path] = set()
    for path in explicit + walked + _requirements_included(explicit + walked, excludes, root):
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            found.files.append(path)
    found.files.sort(key=lambda p: p.as_posix())
    return found


def _walk(top: Path, file_patterns: tuple[str, ...], excludes: list[str], root: Path):
    def on_error(exc: OSError) -> None:  # an unreadable folder is skipped, not fatal
        pass

    for folder, dirnames, filenames in os.walk(top, onerror=on_error):
        base = Path(folder)
        dirnames[:] = sorted(d for d in dirnames if not _matches_any(base / d, excludes, root))
        for filename in filenames:
            path = base / filename
            if (
                any(fnmatch.fnmatch(filename, p) for p in file_patterns)
                and kind_for(path).taken_by_walk(path)
                and not _matches_any(path, excludes, root)
            ):
                yield path


def _excluded(path: Path, excludes: list[str], top: Path) -> bool:
    """Whether the file, or a folder it is in below ``top``, matches an exclude (as in a walk)."""
    folders = [p for p in path.parents if p.is_relative_to(top) and p != top]
    return any(_matches_any(p, excludes, top) for p in [path, *folders])


def _requirements_included(files: list[Path], excludes: list[str], root: Path) -> list[Path]:
    """The files that ``-r`` / ``-c`` lines pull in, transitively, as pip reads them (only files
    inside the tree, ``root``, and not excluded)."""
    including = [p for p in files if kind_for(p).includes_files]
    if not including:
        return []  # spares the import on a run without requirements files
    from trllint.engine.inputs.requirements import included_requirements

    top = root.resolve()
    return included_requirements(including, top, lambda path: _excluded(path, excludes, top))


def _git_ignored(files: list[Path]) -> set[Path]:
    """The files git would ignore; empty outside a work tree or without git."""
    by_folder: dict[Path, list[Path]] = {}
    for path in files:
        by_folder.setdefault(path.parent, []).append(path)
    # One git call per work tree: group by the top of each tree.
    tops: dict[str, list[Path]] = {}
    for folder, members in by_folder.items():
        top = _work_tree_top(folder)
        if top is not None:
            tops.setdefault(top, []).extend(members)
    ignored: set[Path] = set()
    for top, members in tops.items():
        payload = "\0".join(str(p.absolute()) for p in members) + "\0"
        try:
            result = subprocess.run(
                ["git", "-C", top, "check-ignore", "-z", "--stdin"],
                input=payload.encode("utf-8", "surrogateescape"),
                capture_output=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if result.returncode not in (0, 1):
            continue
        names = {n for n in result.stdout.decode("utf-8", "surrogateescape").split("\0") if n}
        ignored |= {p for p in members if str(p.absolute()) in names}
    return ignored


_tops: dict[Path, str | None] = {}


def _work_tree_top(folder: Path) -> str | None:
    folder = folder.absolute()
    if folder in _tops:
        return _tops[folder]
    top = None
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            top = str(candidate)
            break
        if candidate in _tops:
            top = _tops[candidate]
            break
    _tops[folder] = top
    return top
