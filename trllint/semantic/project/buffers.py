"""An editor's buffers of project modules, read in place of the files on disk (trllint server): a
file linted in the editor sees the modules it imports as they are typed, saved or not."""

from __future__ import annotations

from pathlib import Path

_UNSAVED: dict[Path, bytes] = {}


def read_module(path: Path) -> bytes:
    """A project module's bytes: its editor buffer when one is open, else the file."""
    data = _UNSAVED.get(path)
    return path.read_bytes() if data is None else data


def has_unsaved_buffer(path: Path) -> bool:
    """An editor buffer stands for the module at ``path`` (``read_module`` reads it, not the file)."""
    return path in _UNSAVED


def keep_buffer(path: Path, data: bytes | None) -> None:
    """Read ``data`` as the module at ``path`` (resolved); None: the file on disk again."""
    if data is None:
        _UNSAVED.pop(path, None)
    else:
        _UNSAVED[path] = data
