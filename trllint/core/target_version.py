"""The Python version the linted code must run on: ``target-version`` (``"py310"``, Ruff's
spelling), else the lowest version ``requires-python`` admits, else the interpreter running trllint.

Syntax newer than the target is a TRL000 (trllint.core.syntax), named with the version it needs.
"""

from __future__ import annotations

import sys

from dataclasses import dataclass

# The versions a target may name: Ruff's range (py37 .. py314).
OLDEST, NEWEST = (3, 7), (3, 14)
KNOWN_VERSIONS = tuple((3, minor) for minor in range(OLDEST[1], NEWEST[1] + 1))


@dataclass(frozen=True)
class TargetVersion:
    version: tuple[int, int]
    # Where it came from, as the TRL000 message says it: `target-version = "py310"`,
    # `requires-python = ">=3.10"`, or the running interpreter.
    origin: str
    # Nothing named it: the running interpreter stands in (a notebook that last ran on a newer
    # Python may raise it, trllint.engine.inputs.notebook).
    assumed: bool = False

    def __str__(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"


def running_interpreter() -> TargetVersion:
    return TargetVersion(
        (sys.version_info[0], sys.version_info[1]),
        "the Python running trllint; set target-version or requires-python",
        assumed=True,
    )


def parse_target_version(value: str) -> tuple[int, int] | None:
    """``"py310"`` -> (3, 10); None for a spelling Ruff does not accept or a version not known."""
    if not value.startswith("py3") or not value[3:].isdigit() or value[3:].startswith("0"):
        return None
    version = (3, int(value[3:]))
    return version if version in KNOWN_VERSIONS else None


def lowest_admitted(requires_python: str) -> tuple[int, int] | None:
    """The lowest Python 3 minor version a ``requires-python`` specifier admits (``">=3.10"`` ->
    (3, 10), ``"~=3.9.2"`` -> (3, 9), ``">3.9"`` -> (3, 9) for 3.9.1); an admitted version older
    than the oldest known counts as the oldest. None when it admits no known version; raises
    ValueError when it is not a specifier."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifiers = SpecifierSet(requires_python)
    except InvalidSpecifier:
        raise ValueError(f"not a version specifier: {requires_python!r}") from None
    older = [(3, minor) for minor in range(0, OLDEST[1])]
    for version in older + list(KNOWN_VERSIONS):
        # Patch releases matter: ">3.9" admits no 3.9 but 3.9.1; "<3.9.5" admits 3.9.0.
        candidates = (f"{version[0]}.{version[1]}.{patch}" for patch in range(0, 100))
        if any(specifiers.contains(candidate, prereleases=True) for candidate in candidates):
            return max(version, OLDEST)
    return None
