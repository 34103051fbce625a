"""Input kinds: how a file's bytes become the source the rules read, and the fixed source bytes again.

Each kind (Python, a Jupyter notebook, TOML, a pip requirements file, other text) answers the
same questions (:class:`InputKind`), so the pipeline (``trllint.engine.pipeline``), the fix loop
and the folder walk never branch on a file's name: :func:`kind_for` is the one place that reads
suffixes and file names, and it imports a kind's module only when a file of that kind is met (a
run over ``.py`` files never loads the notebook reader, nor tomllib).
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from trllint.core.findings import Finding
    from trllint.core.source import SourceFile
    from trllint.core.target_version import TargetVersion

# The files a folder walk reads whatever rules are selected: Python (one that does not parse is
# a TRL000 whatever is selected) and notebooks (their code cells are Python).
ALWAYS_READ_PATTERNS = ("*.py", "*.ipynb")


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


def kind_for(path: str | PurePath) -> InputKind:
    """The kind of the file at ``path``, by its name."""
    path = PurePath(path)
    suffix = path.suffix
    if suffix == ".py":
        from trllint.engine.inputs.python import PYTHON

        return PYTHON
    if suffix == ".pyi":
        from trllint.engine.inputs.python import STUB

        return STUB
    if suffix == ".ipynb":
        from trllint.engine.inputs.notebook import NOTEBOOK

        return NOTEBOOK
    if suffix == ".toml":
        from trllint.engine.inputs.toml import TOML

        return TOML
    from trllint.core.requirements_files import REQUIREMENTS_SUFFIXES

    if suffix in REQUIREMENTS_SUFFIXES:
        # Any .txt / .in handed over is read in pip's format; TRL005 reads one not named as a
        # requirements file only when every line is a requirement (a README.txt stays silent).
        from trllint.engine.inputs.requirements import REQUIREMENTS

        return REQUIREMENTS
    from trllint.engine.inputs.text import TEXT  # setup.cfg, and whatever else a rule reads

    return TEXT
