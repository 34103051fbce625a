"""pip requirements files (``requirements*.txt``, ``requirements/*.in``, what they include).

Read as text (TRL005 reads pip's format in it). A folder walk takes the ``.txt`` / ``.in`` files
named or placed as requirements files, then the files their ``-r`` / ``-c`` lines pull in,
transitively, as pip reads them; any ``.txt`` / ``.in`` named on the command line is read too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePath
from typing import Callable

from trllint.core.requirements_files import PIP_COMMENT, is_requirements_path
from trllint.engine.inputs.text import TextKind

_INCLUDE = re.compile(r"^\s*(?:-[rc]\s*|--(?:requirement|constraint)(?:\s*=\s*|\s+))(?P<target>\S+)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


class RequirementsKind(TextKind):
    name = "requirements"
    includes_files = True

    def taken_by_walk(self, path: PurePath) -> bool:
        # Text files are many (README.txt, CMakeLists.txt); of them a walk takes requirements files.
        return is_requirements_path(path)


REQUIREMENTS = RequirementsKind()


def included_files(text: str) -> list[str]:
    """The files a requirements file pulls in with ``-r`` / ``-c`` (relative to its folder; URLs left out)."""
    targets = []
    for line in re.split(r"\r\n|\r|\n", text):
        match = _INCLUDE.match(PIP_COMMENT.sub("", line))
        if match and not _URL.match(match.group("target")):
            targets.append(match.group("target"))
    return targets


def included_requirements(files: list[Path], top: Path, excluded: Callable[[Path], bool]) -> list[Path]:
    """The files that the requirements files ``files`` include, transitively.

    Only files inside ``top`` (resolved) and not ``excluded`` are read, whatever a line names
    (``-r ../../x.txt``, ``-r /etc/...``), and each file once, so an include cycle ends.
    """
    queue = list(files)
    done = {p.resolve() for p in queue}
    included: list[Path] = []
    while queue:
        path = queue.pop()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # the lint of the file itself reports it
        for target in included_files(text):
            candidate = Path(os.path.normpath(path.parent / target))  # reported as requirements/x.txt, not a/../x.txt
            resolved = candidate.resolve()
            if resolved in done or not resolved.is_relative_to(top) or not resolved.is_file() or excluded(resolved):
                continue
            done.add(resolved)
            included.append(candidate)
            queue.append(candidate)
    return included
