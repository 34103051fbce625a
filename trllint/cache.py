"""The result cache: a warm run with nothing changed reads no source it has seen before.

One JSON file per configuration under ``.trllint_cache/`` maps each path to the size, mtime and
SHA-256 of the content that produced its findings. An unchanged size and mtime is trusted as in
Ruff; otherwise the content hash decides, so a touched-but-identical file is still a hit. The key
of the cache file covers the trllint version, the code of the engine and rule pack, the selected
rules and their settings: change any and the old entries are simply not read.

Two runs may share the folder: each writes its own temporary file and renames it into place, so
a reader sees a whole cache file or none, never a torn one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from trllint import __version__
from trllint.batch import FileResult, Mode, process_files
from trllint.config import Config
from trllint.rule import Edit, Finding, Fix
from trllint.runner import RuleSet

CACHE_DIR = ".trllint_cache"


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """A hash of the engine's and the rule pack's source: editing a rule invalidates the cache."""
    from trllint.registry import rules_root

    digest = hashlib.sha256(__version__.encode())
    for folder in (Path(__file__).parent, rules_root()):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".toml") and "cases" not in path.parts:
                digest.update(path.as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _finding_to_json(f: Finding) -> dict:
    data = {k: getattr(f, k) for k in ("code", "name", "message", "path", "line", "column", "end_line", "end_column")}
    data["internal"] = f.internal
    if f.fix is not None:
        data["fix"] = {
            "applicability": f.fix.applicability,
            "edits": [[e.start, e.end, e.content, e.start_position, e.end_position] for e in f.fix.edits],
        }
    return data


def _finding_from_json(data: dict) -> Finding:
    fix = None
    if "fix" in data:
        fix = Fix(
            tuple(Edit(s, e, c, tuple(sp), tuple(ep)) for s, e, c, sp, ep in data["fix"]["edits"]),
            data["fix"]["applicability"],
        )
    return Finding(fix=fix, **{k: v for k, v in data.items() if k != "fix"})


class ResultCache:
    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.file = folder / f"results-{key}.json"
        self.entries: dict[str, dict] = {}

    @classmethod
    def for_run(cls, config: Config, codes: list[str]) -> ResultCache | None:
        folder = config.root / CACHE_DIR
        key = hashlib.sha256((_code_fingerprint() + config.settings_fingerprint()).encode()).hexdigest()[:20]
        cache = cls(folder, key)
        try:
            cache.entries = json.loads(cache.file.read_text(encoding="utf-8"))
            if not isinstance(cache.entries, dict):
                cache.entries = {}
        except (OSError, ValueError):
            cache.entries = {}  # missing or damaged: start empty, never fail the run
        return cache

    def process(self, jobs: list[tuple[Path, str]], ruleset: RuleSet, mode: Mode, *, workers: int) -> list[FileResult]:
        results: dict[str, FileResult] = {}
        misses: list[tuple[Path, str]] = []
        stamps: dict[str, tuple[int, int, str | None]] = {}
        for path, display in jobs:
            key = str(path.absolute())
            try:
                st = path.stat()
            except OSError:
                misses.append((path, display))
                continue
            entry = self.entries.get(key)
            stamp = (st.st_size, st.st_mtime_ns)
            if entry and (entry["size"], entry["mtime"]) == stamp and entry["display"] == display:
                results[key] = self._result(entry, display)
                continue
            digest = None
            if entry and entry["size"] == st.st_size and entry["display"] == display:
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError:
                    digest = None
                if digest == entry["sha256"]:
                    entry["mtime"] = st.st_mtime_ns
                    results[key] = self._result(entry, display)
                    continue
            stamps[key] = (st.st_size, st.st_mtime_ns, digest)
            misses.append((path, display))
        fresh = process_files(misses, ruleset, mode, workers=workers)
        for (path, display), result in zip(misses, fresh):
            key = str(path.absolute())
            results[key] = result
            if result.problems or result.sha256 is None or key not in stamps:
                continue  # an unreadable file is asked again next time
            size, mtime, _ = stamps[key]
            self.entries[key] = {
                "size": size,
                "mtime": mtime,
                "sha256": result.sha256,
                "display": display,
                "findings": [_finding_to_json(f) for f in result.findings],
            }
        self._save()
        return [results[str(path.absolute())] for path, _ in jobs]

    @staticmethod
    def _result(entry: dict, display: str) -> FileResult:
        return FileResult(display, findings=[_finding_from_json(f) for f in entry["findings"]])

    def _save(self) -> None:
        try:
            self.folder.mkdir(exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Written by trllint: the cache is never committed.\n*\n", encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".results-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle, separators=(",", ":"))
            os.replace(temp, self.file)
        except OSError:
            pass  # a read-only checkout still lints; it just cannot remember
