"""An import-linter contract type that finds every import circle between modules, package faces
(``__init__``) included.

import-linter's ``acyclic_siblings`` compares the children of a package with each other, so a
circle through the package's own ``__init__`` (the face imports a module, the module imports
the face) escapes it. Any other module circle does show up there as a circle between siblings,
which is why this contract and that one together leave no circle unseen. Registered in
pyproject.toml (``contract_types``); ``lint-imports`` runs from the repository root, so
``tests.import_contracts`` is importable there.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules


def module_circles(graph: ImportGraph, modules: set[str]) -> list[tuple[list[str], int]]:
    """The circles among ``modules``: one per group of modules that all reach each other, as a
    chain that starts and ends at the group's first module (by name), and the group's size."""
    circles = []
    for group in _strongly_connected(graph, modules):
        if len(group) < 2:
            continue
        start = min(group)
        following = min(graph.find_modules_directly_imported_by(start) & group)
        chain = graph.find_shortest_chain(importer=following, imported=start)
        circles.append(([start, *(chain or (following, start))], len(group)))
    return sorted(circles)


def _strongly_connected(graph: ImportGraph, modules: set[str]) -> list[set[str]]:
    """Tarjan's algorithm over the direct imports among ``modules``, without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & modules)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            following = next(imported, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(sorted(graph.find_modules_directly_imported_by(following) & modules))))
                elif following in on_stack:
                    low[module] = min(low[module], index[following])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                groups.append(group)
    return groups


class AcyclicModulesContract(Contract):
    """No module of ``containers`` (the containers themselves and every module under them) reaches
    itself again through its imports (those under ``if TYPE_CHECKING:`` count: mypy and a reader
    follow them too)."""

    type_name = "acyclic_modules"

    containers = fields.SetField(subfield=fields.ModuleExpressionField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        found = module_expressions_to_modules(graph, sorted(self.containers), raise_if_unmatched=True)  # type: ignore[arg-type]
        modules: set[str] = set()
        for container in found:
            modules.add(container.name)
            modules |= graph.find_descendants(container.name)
        circles = module_circles(graph, modules)
        return ContractCheck(kept=not circles, warnings=[], metadata={"circles": circles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for chain, size in check.metadata["circles"]:
            output.print_error(" -> ".join(chain))
            if size > len(chain) - 1:
                output.print_error(f"(one circle of {size} modules that all import each other)")
            output.new_line()
