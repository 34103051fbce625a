"""Writing a fixed file so that nothing is ever half-written.

Writing goes through a temporary file in the same folder and ``os.replace``, so a reader (or a
crash) sees the old bytes or the new, never a mixture.
"""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path


class WriteError(Exception):
    pass


def write_atomically(path: Path, data: bytes, *, expected_old: bytes) -> None:
    """Replace ``path``'s bytes with ``data`` all at once, keeping its permission bits.

    ``expected_old`` is what was read at the start: if the file changed or vanished since, it is
    left alone, since writing would lose someone else's edit.
    """
    target = Path(os.path.realpath(path))  # write through a symbolic link, keep the link
    try:
        st = target.stat()
    except FileNotFoundError:
        raise WriteError("the file vanished before it could be written; not written") from None
    except OSError as exc:
        raise WriteError(f"cannot stat the file ({exc.strerror}); not written") from None
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise WriteError("the file is read-only; not written")
    # Orphans go first: a run killed after its own replace (below) but before a tidy-up there
    # would leave one beside a file that is already fixed, which no later run writes again.
    _remove_orphaned_temporaries(target)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
        if current == data:
            return  # another run (a second `trllint --fix`, say) already wrote exactly this
        if current != expected_old:
            raise WriteError("the file changed while it was being fixed; not written")
    except FileNotFoundError:
        raise WriteError("the file vanished before it could be written; not written") from None
    import tempfile  # only a run that writes needs it

    mode = stat.S_IMODE(st.st_mode)
    prefix = f".{target.name}.{os.getpid()}."
    try:
        fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=_TEMP_SUFFIX)
    except OSError as exc:
        raise WriteError(f"cannot create a temporary file beside it ({exc.strerror}); not written") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except OSError as exc:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise WriteError(f"cannot write ({exc.strerror}); not written") from None


_TEMP_SUFFIX = ".trllint-tmp"


def _remove_orphaned_temporaries(target: Path) -> None:
    """Delete what earlier runs, killed mid-write, left beside ``target``.

    A temporary file's name carries its writer's process id; it is an orphan when that process is
    gone. A live writer's file (a second run at work on the same tree) is never touched.
    """
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*{_TEMP_SUFFIX}"):
        pid = leftover.name[len(target.name) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue
        try:
            leftover.unlink()
        except OSError:
            pass


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    # A killed writer stays in the process table as a zombie until something reaps it (in a
    # container, perhaps never); it writes nothing more.
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): alive, as kill said
