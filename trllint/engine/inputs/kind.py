"""What every input kind is: the questions the pipeline, the fix loop and the folder walk ask of
a file, whatever its kind (:class:`InputKind`), and the errors its reading raises.

A module of its own so that the kinds (``python``, ``notebook``, ``toml``, ``requirements``,
``text``) and the package face that picks among them (``trllint.engine.inputs.kind_for``) both
import it, and no kind imports the face.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from trllint.core.findings import Finding
    from trllint.core.source import SourceFile
    from trllint.core.target_version import TargetVersion


class Unreadable(ValueError):
    """The bytes cannot be read as a file of their kind; ``str()`` is the TRL000 message."""


class EncodeError(ValueError):
    """The fixed text cannot be put back into the file's bytes; ``str()`` says why (nothing is written)."""


class Decoded(Protocol):
    """One file, decoded: the source the rules read and the way back to the file's bytes."""

    source: SourceFile
    # The file name the rules are told (a notebook's code cells are Python: ``x.ipynb.py``).
    linted_as: str
    # TRL000s for parts of the file left out of ``source`` (a notebook's cell that does not parse),
    # placed as the rules' findings are (``map_back`` places them in the file).
    unlinted: list[Finding]
    # The Python version the file says it runs on, over an assumed target (a notebook's kernel).
    target: TargetVersion | None

    def map_back(self, finding: Finding) -> Finding:
        """The finding placed in the file (a notebook's program line becomes a cell and its line)."""

    def encode(self, text: str) -> bytes:
        """The file's bytes with ``text`` as its source; raises :class:`EncodeError`."""

    def diff_texts(self, new_text: str, new_bytes: bytes) -> tuple[str, str]:
        """The file's text before and after, as ``--diff`` shows it."""


class InputKind(Protocol):
    name: str
    # The bytes are Python source (decoded as the interpreter does: coding cookie, BOM).
    is_python: bool
    # Read whatever rules are selected: one that does not parse is a TRL000.
    always_read: bool
    # How many times the size limit (``RuleSet.max_file_bytes``) the file's bytes may be.
    size_factor: int
    # It names other files to read with it (a requirements file's ``-r`` / ``-c`` lines).
    includes_files: bool

    def taken_by_walk(self, path: PurePath) -> bool:
        """Whether a folder walk reads this file (of the ``.txt`` files, only requirements files)."""

    def decode(
        self, data: bytes, display: str, filename: str, path: Path | None = None, target: TargetVersion | None = None
    ) -> Decoded | None:
        """The file as the rules read it, or None when nothing in it is for them (an R notebook);
        raises :class:`Unreadable`. ``path``: where the file lives, which places it in its project;
        ``target``: the Python version its code must run on."""

    def validate(self, before: SourceFile, after_text: str) -> str | None:
        """Why ``after_text`` (the fixed source) must not be written, or None when it is sound."""
