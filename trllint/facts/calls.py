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


def called_names(model: SemanticModel) -> frozenset[str]:
    """The names the file's calls call: ``f`` for ``f(...)``, ``m`` for ``x.m(...)``, and for a
    name an import binds under another name, the imported name too (``g(...)`` calls ``gather``
    after ``from accelerate.utils import gather as g``). A question that needs some call of a
    name (an unwrap, a prepare, a collective) is answered at once for a file that calls no such
    name, before any call's receiver is followed."""

    def compute() -> frozenset[str]:
        names = set()
        for call in model.calls:
            func = call.func
            if isinstance(func, cst.Attribute):
                names.add(func.attr.value)
            elif isinstance(func, cst.Name):
                names.add(func.value)
        aliases = model.imported_as
        names.update(*(aliases[name] for name in names.intersection(aliases)))
        return frozenset(names)

    return model.once((called_names,), compute)
