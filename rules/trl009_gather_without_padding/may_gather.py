"""Before LibCST parses a file: may a call of it gather through accelerate? (CPython's tree)

Every TRL009 finding is an argument of such a call (``GatherWithoutPadding._gathering_accelerator``):
``x.gather(...)`` or ``x.gather_for_metrics(...)`` where ``x`` is an accelerator
(``trllint.facts.accelerators.is_accelerator``), or accelerate's ``gather`` function called under
the name an import binds. DeepSpeed's kernels call ``torch.gather`` and ``logits.gather`` in
files no rule else reads. Wherever it cannot tell, it says it may:

- an accelerator is a name whose last part names one (``names_an_accelerator``), an
  ``Accelerator(...)`` call (under any name an import binds to ``Accelerator``), or a dotted name
  the file assigns, anywhere, either of those (the fact asks only the enclosing scopes);
- accelerate's ``gather`` is a name an import binds to a ``gather``.
"""

from __future__ import annotations

import ast

from trllint.core.ast_walk import assigned_names, dotted_name, nodes
from trllint.facts.accelerators import names_an_accelerator

GATHER_METHODS = frozenset({"gather", "gather_for_metrics"})


def may_gather_through_accelerate(tree: ast.Module) -> bool:
    everything = nodes(tree)
    imported = _imported_as(everything)
    makers = {"Accelerator"} | imported.get("Accelerator", set())
    gathers = imported.get("gather", set())

    def accelerator(node: ast.expr) -> bool:
        if type(node) is ast.Call:
            name = dotted_name(node.func)  # type: ignore[attr-defined]
            return name is not None and name.rsplit(".", 1)[-1] in makers
        name = dotted_name(node)
        return name is not None and (names_an_accelerator(name) or name in bound)

    bound: set[str] = set()
    for node in everything:
        if type(node) is ast.Assign or (type(node) is ast.AnnAssign and node.value is not None):  # type: ignore[attr-defined]
            if accelerator(node.value):  # type: ignore[attr-defined]
                targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
                bound.update(name for target in targets for name in assigned_names(target))
    for node in everything:
        if type(node) is not ast.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr in GATHER_METHODS and accelerator(func.value):
            return True
        if type(func) is ast.Name and func.id in gathers:
            return True
    return False


def _imported_as(everything: list[ast.AST]) -> dict[str, set[str]]:
    """Each imported name's last part -> the local names imports bind it to."""
    found: dict[str, set[str]] = {}
    for node in everything:
        if type(node) is ast.ImportFrom or type(node) is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                last = alias.name.rsplit(".", 1)[-1]
                found.setdefault(last, set()).add(alias.asname or alias.name.split(".", 1)[0])
    return found
