"""The result cache: a warm run with nothing changed reads no source it has seen before.

One JSON file per configuration under ``.trllint_cache/`` maps each path to the size, mtime and
SHA-256 of the content that produced its findings. An unchanged size and mtime is trusted as in
Ruff; otherwise the content hash decides, so a touched-but-identical file is still a hit. The
project modules whose facts a file's findings read are checked the same way: the file also keeps
the size and mtime each had when its content was last hashed (under the empty key). The key
of the cache file covers the trllint version, the code of the engine and rule pack, the selected
rules, their settings and preview (on, a file's preview findings are in its entry; off, they are
not): change any and the old entries are simply not read.

Two runs may share the folder: each writes its own temporary file and renames it into place, so
a reader sees a whole cache file or none, never a torn one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from trllint import __version__
from trllint.app.config import Config
from trllint.core.findings import Edit, Evidence, Finding, Fix
from trllint.engine.results import FileResult, Mode
from trllint.facts.launch import LAUNCH_SOURCES
from trllint.semantic.project.index import MODULES_IN_FOLDER, PROJECT_MODULES

if TYPE_CHECKING:
    from trllint.rule.ruleset import RuleSet



@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the engine's and the rule pack's source: editing a rule invalidates the cache."""
    from trllint.rule.registry import rules_root

    digest = hashlib.sha256(__version__.encode())
    for folder in (Path(__file__).resolve().parent.parent, rules_root()):  # the whole engine, all layers
        for path in _fingerprinted_files(folder):
            digest.update(path.as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# Folders that hold no source of the engine or the rules: a rule's cases, compiled bytecode.
_NOT_FINGERPRINTED = ("cases", "__pycache__")


def _fingerprinted_files(folder: Path) -> list[Path]:
    """The ``.py`` and ``.toml`` files under ``folder``, outside its ``cases`` folders, in the
    order of their paths' parts. Walked with ``os.walk``, which is told not to enter the cases
    and bytecode folders (four fifths of what is there): every run asks this once, a warm one
    too, and ``Path.rglob`` then a sort of every path cost as much as the rest of a warm run."""
    found: list[tuple[tuple[str, ...], Path]] = []
    for current, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name not in _NOT_FINGERPRINTED]
        base = Path(current)
        parts = base.relative_to(folder).parts
        found.extend(
            ((*parts, name), base / name)
            for name in files
            if os.path.splitext(name)[1] in (".py", ".toml") and name not in _NOT_FINGERPRINTED
        )
    return [path for _, path in sorted(found)]


def _finding_to_json(f: Finding) -> dict:
    data = {k: getattr(f, k) for k in ("code", "name", "message", "path", "line", "column", "end_line", "end_column")}
    data["internal"] = f.internal
    if f.preview:
        data["preview"] = True
    if f.kind:
        data["kind"] = f.kind
    if f.cell is not None:
        data["cell"] = f.cell
    if f.evidence:
        data["evidence"] = [[e.path, e.line, e.message, e.cell] for e in f.evidence]
    if f.fix is not None:
        data["fix"] = {
            "applicability": f.fix.applicability,
            "reason": f.fix.reason,
            "edits": [[e.start, e.end, e.content, e.start_position, e.end_position] for e in f.fix.edits],
        }
    return data


def _finding_from_json(data: dict) -> Finding:
    fix = None
    if "fix" in data:
        fix = Fix(
            tuple(Edit(s, e, c, tuple(sp), tuple(ep)) for s, e, c, sp, ep in data["fix"]["edits"]),
            data["fix"]["applicability"],
            data["fix"].get("reason"),
        )
    evidence = tuple(Evidence(*item) for item in data.get("evidence", ()))
    return Finding(fix=fix, evidence=evidence, **{k: v for k, v in data.items() if k not in ("fix", "evidence")})


# Bumped whenever the layout of an entry changes: older cache files are then simply not read.
CACHE_FORMAT = 6


# The key, among the entries, of the project modules' stamps: no file's key (an absolute path) is empty.
_MODULE_STAMPS = ""


def _unchanged(dependency: str, digest: str, stamps: dict[str, list]) -> bool:
    """The module (or a project's launch files, or a folder's list of modules) ``dependency``
    still has the content ``digest``.
    A module whose size and mtime are those it had when its content last had ``digest`` is
    trusted without reading it, as a linted file is (``stamps``: path -> [size, mtime, digest],
    refreshed here). The stat comes before the read: a module written in between is read again
    by the next run."""
    if dependency.startswith(LAUNCH_SOURCES):  # a project's launch files, as one digest
        from trllint.facts.launch.project import project_launch

        return project_launch(Path(dependency[len(LAUNCH_SOURCES) :])).digest == digest
    if dependency.startswith(PROJECT_MODULES):  # every module of a project
        from trllint.semantic.project.index import project_modules_unchanged

        return project_modules_unchanged(Path(dependency[len(PROJECT_MODULES) :]), digest)
    if dependency.startswith(MODULES_IN_FOLDER):  # which modules a folder holds
        from trllint.semantic.project.modules import modules_listing_digest

        return modules_listing_digest(Path(dependency[len(MODULES_IN_FOLDER) :])) == digest
    from trllint.semantic.project.buffers import has_unsaved_buffer
    from trllint.semantic.project.fact_cache import module_digest

    # The path was resolved when the result was computed (``ProjectView.consulted``).
    path = Path(dependency)
    if has_unsaved_buffer(path):
        return module_digest(path) == digest
    try:
        st = os.stat(dependency)
    except OSError:
        return False  # it cannot be read: the findings that read it are asked again
    stamp = [st.st_size, st.st_mtime_ns]
    known = stamps.get(dependency)
    if known == [*stamp, digest]:
        return True
    actual = module_digest(path)
    if actual is not None:
        stamps[dependency] = [*stamp, actual]
    return actual == digest


class ResultCache:
    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.file = folder / f"results-{key}.json"
        self.entries: dict[str, dict] = {}
        self.changed: dict[str, dict] = {}  # the entries this run wrote or refreshed
        # A project module most files import is checked once per run, not once per file.
        self._dependencies_checked: dict[tuple[str, str], bool] = {}

    @classmethod
    def for_run(cls, config: Config, codes: list[str]) -> ResultCache | None:
        folder = config.cache_folder()
        material = f"{CACHE_FORMAT}\0{code_fingerprint()}\0{config.settings_fingerprint()}\0{sorted(codes)}"
        cache = cls(folder, hashlib.sha256(material.encode()).hexdigest()[:20])
        cache.entries = cache._load()
        return cache

    def cached_results(self, jobs: list[tuple[Path, str]]) -> list[FileResult] | None:
        """Every job's result read from the cache, or None as soon as one is not there (a warm run
        answers from the cache alone only when nothing is left to lint)."""
        results: list[FileResult] = []
        for path, display in jobs:
            try:
                st = path.stat()
            except OSError:
                return None
            hit = self._lookup(str(path.absolute()), path, display, (st.st_size, st.st_mtime_ns))
            if hit is None:
                return None
            results.append(hit)
        if self.changed:
            self._save()  # touched files whose content is unchanged: their new mtimes
        return results

    def _load(self) -> dict[str, dict]:
        """The entries on disk; a missing or damaged file is an empty cache, never a failed run."""
        try:
            data = json.loads(self.file.read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def process(self, jobs: list[tuple[Path, str]], ruleset: RuleSet, mode: Mode, *, workers: int) -> list[FileResult]:
        results: dict[str, FileResult] = {}
        misses: list[tuple[Path, str]] = []
        stamps: dict[str, tuple[int, int]] = {}
        for path, display in jobs:
            key = str(path.absolute())
            try:
                st = path.stat()
            except OSError:
                misses.append((path, display))
                continue
            stamp = (st.st_size, st.st_mtime_ns)
            hit = self._lookup(key, path, display, stamp)
            if hit is not None:
                results[key] = hit
                continue
            stamps[key] = stamp
            misses.append((path, display))
        from trllint.app.pool import process_files

        fresh = process_files(misses, ruleset, mode, workers=workers)
        for (path, display), result in zip(misses, fresh):
            key = str(path.absolute())
            results[key] = result
            if result.problems or result.warnings or result.sha256 is None or key not in stamps:
                continue  # an unreadable or skipped file is asked again next time (and warned of)
            size, mtime = stamps[key]
            self._remember(key, {
                "size": size,
                "mtime": mtime,
                "sha256": result.sha256,
                "display": display,
                "findings": [_finding_to_json(f) for f in result.findings],
                "dependencies": result.dependencies,
            })
        if self.changed:
            self._save()
        if "trllint.rule.base" in sys.modules:  # this run imported the rules: list them for warm runs
            from trllint.app.rule_catalog import write_catalog

            write_catalog(self.folder, code_fingerprint())
        return [results[str(path.absolute())] for path, _ in jobs]

    def _lookup(self, key: str, path: Path, display: str, stamp: tuple[int, int]) -> FileResult | None:
        entry = self.entries.get(key)
        try:
            if not entry or entry["display"] != display or entry["size"] != stamp[0]:
                return None
            if entry["mtime"] != stamp[1]:
                # Touched (a checkout, a formatter that changed nothing): the content decides.
                try:
                    if hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
                        return None
                except OSError:
                    return None
                self._remember(key, dict(entry, mtime=stamp[1]))
            if not all(self._unchanged(dep, digest) for dep, digest in entry["dependencies"].items()):
                return None  # a module whose summary the findings read has changed
            return FileResult(
                display, findings=[_finding_from_json(f) for f in entry["findings"]], dependencies=entry["dependencies"]
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # an entry damaged on disk is a miss

    def _unchanged(self, dependency: str, digest: str) -> bool:
        key = (dependency, digest)
        if key not in self._dependencies_checked:
            stamps = self.entries.get(_MODULE_STAMPS)
            if not isinstance(stamps, dict):
                stamps = self.entries[_MODULE_STAMPS] = {}
            before = len(stamps), stamps.get(dependency)
            self._dependencies_checked[key] = _unchanged(dependency, digest, stamps)
            if (len(stamps), stamps.get(dependency)) != before:
                self.changed[_MODULE_STAMPS] = stamps  # saved with the entries this run refreshed
        return self._dependencies_checked[key]

    def _remember(self, key: str, entry: dict) -> None:
        self.entries[key] = entry
        self.changed[key] = entry

    def _save(self) -> None:
        """Write the entries, merged over what another run may have saved since we loaded.

        Two runs that share the folder each rename a whole file into place, so the cache is always
        loadable; merging keeps most of the other run's entries (the last rename wins a tie).
        """
        try:
            self.folder.mkdir(exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Written by trllint: the cache is never committed.\n*\n", encoding="utf-8")
            entries = self._load()
            entries.update(self.changed)
            import tempfile

            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".results-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entries, handle, separators=(",", ":"))
                os.replace(temp, self.file)
            except BaseException:
                try:
                    os.unlink(temp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only checkout still lints; it just cannot remember
