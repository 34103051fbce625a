"""Input kinds: how a file's bytes become the source the rules read, and the fixed source bytes again.

Each kind (Python, a Jupyter notebook, TOML, a pip requirements file, other text) answers the
same questions (:class:`InputKind`), so the pipeline (``trllint.engine.pipeline``), the fix loop
and the folder walk never branch on a file's name: :func:`kind_for` is the one place that reads
suffixes and file names, and it imports a kind's module only when a file of that kind is met (a
run over ``.py`` files never loads the notebook reader, nor tomllib).
"""

from __future__ import annotations

from pathlib import PurePath

# What the pipeline and the editor server catch, read here with kind_for.
from trllint.engine.inputs.kind import EncodeError, InputKind, Unreadable

__all__ = ["ALWAYS_READ_PATTERNS", "EncodeError", "InputKind", "Unreadable", "kind_for"]

# The files a folder walk reads whatever rules are selected: Python (one that does not parse is
# a TRL000 whatever is selected) and notebooks (their code cells are Python).
ALWAYS_READ_PATTERNS = ("*.py", "*.ipynb")


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
