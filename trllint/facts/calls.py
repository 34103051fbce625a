"""Every call of a file, in source order: what a whole-file check (``Rule.check_module``) judges
instead of collecting calls in a ``visit_Call`` of its own.

One walk per file however many rules ask: the semantic model collects the calls in the walk
that finds the file's definitions (``SemanticModel.calls``); the walk skips whitespace, comments
and punctuation (``trllint.core.cst.walk``), a third of the tree.
"""

from __future__ import annotations

import libcst as cst

from trllint.semantic.model import SemanticModel


def calls_in(model: SemanticModel) -> tuple[cst.Call, ...]:
    """The file's calls in the order a traversal meets them (an outer call before the calls in
    its arguments)."""
    return model.calls
