"""Which files are pip requirements files, by their name or their folder.

In core because two layers ask: the requirements input kind (``trllint.engine.inputs``), to know
which ``.txt`` / ``.in`` files a folder walk takes, and TRL005, to know whether a file is named as
one (then every line is read as a requirement) or must prove it line by line (a ``notes.txt``
named on the command line); a rule may not import the engine. Both read pip's comments alike.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePath

# Requirements files by name (the file name) and by place (a `requirements/` folder of them).
REQUIREMENTS_NAMES = (
    "requirements*.txt",
    "requirements*.in",
    "*-requirements.txt",
    "*_requirements.txt",
    "*-requirements.in",
    "*_requirements.in",
)
REQUIREMENTS_FOLDER = "requirements"
# What pip reads as a requirements file when one is handed to it (``-r notes.txt``).
REQUIREMENTS_SUFFIXES = (".txt", ".in")
# pip's comment: a `#` at the start of a line or after white space (`pkg#egg=x` is no comment).
PIP_COMMENT = re.compile(r"(^|\s+)#.*$")


def named_as_requirements(name: str) -> bool:
    """Whether a file name says it is a requirements file (``dev-requirements.in``)."""
    return any(fnmatch.fnmatch(name, pattern) for pattern in REQUIREMENTS_NAMES)


def is_requirements_path(path: PurePath) -> bool:
    """Whether a file is a pip requirements file by its name or its folder."""
    if path.suffix not in REQUIREMENTS_SUFFIXES:
        return False
    return path.parent.name == REQUIREMENTS_FOLDER or named_as_requirements(path.name)
