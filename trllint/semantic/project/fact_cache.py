"""Module facts kept on disk by content: one JSON file per module content hash, in the run's cache
folder, holding every fact computed for that content under ``<key>@<version>``.

A new fact, or a new version of one, is computed again on its own, and every other fact cached for
the module is still read; an older version of a fact is dropped when its new version is stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from trllint.semantic.project.buffers import read_module

if TYPE_CHECKING:
    from trllint.semantic.project.summaries import ModuleAnswer

# A module bigger than this is not read (it is unknown): the bound on what one import costs.
MAX_MODULE_BYTES = 2_000_000
# Bumped whenever the layout of a module's cache file changes (a fact's own changes bump its version).
FACTS_FILE_FORMAT = 2


def module_digest(path: Path) -> str | None:
    """What a module's facts are kept under: the SHA-256 of its bytes; None when it cannot be read
    or is too big to be read at all."""
    return read_and_digest(path)[1]


def read_and_digest(path: Path) -> tuple[bytes | None, str | None]:
    """The module's bytes (its editor buffer when one is open) and their digest (see
    :func:`module_digest`)."""
    try:
        data = read_module(path)
    except OSError:
        return None, None
    return data, None if len(data) > MAX_MODULE_BYTES else hashlib.sha256(data).hexdigest()


class FactCache:
    """The facts cached for each module content in ``folder`` (None: nothing is kept on disk)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._read: dict[str, dict[str, ModuleAnswer]] = {}  # content hash -> its file's facts

    def stored(self, digest: str) -> dict[str, ModuleAnswer]:
        """Every fact the cache holds for the module (``key@version`` -> answer), read once."""
        if digest not in self._read:
            self._read[digest] = _read_facts(self._file(digest))
        return self._read[digest]

    def store(self, digest: str, stored_as: str, answer: ModuleAnswer) -> None:
        """Keep ``answer`` as ``stored_as`` (``key@version``) in the module's cache file."""
        file = self._file(digest)
        if file is None:
            return
        # Read again: another worker may have added a fact of its own since; an older version of
        # this one goes.
        key, _, version = stored_as.rpartition("@")
        stored = {
            name: value
            for name, value in _read_facts(file).items()
            if name.rpartition("@")[0] != key or name.rpartition("@")[2] == version
        }
        stored[stored_as] = answer
        self._read[digest] = stored
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            temp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
            temp.write_text(json.dumps(stored, separators=(",", ":")), encoding="utf-8")
            os.replace(temp, file)
        except OSError:
            pass  # a read-only tree still lints; it just computes the fact again next time

    def _file(self, digest: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"module-facts-{FACTS_FILE_FORMAT}" / f"{digest}.json"


def _read_facts(file: Path | None) -> dict[str, ModuleAnswer]:
    if file is None:
        return {}
    try:
        stored = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return {}  # missing or damaged: computed again
    return {name: value for name, value in stored.items() if isinstance(value, dict)} if isinstance(stored, dict) else {}
