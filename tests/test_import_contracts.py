"""The contract that finds import circles through package faces (tests/import_contracts.py)."""

from __future__ import annotations

from grimp import ImportGraph

from tests.import_contracts import module_circles


def _graph(*imports: tuple[str, str]) -> ImportGraph:
    graph = ImportGraph()
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported)
    return graph


def test_a_face_that_imports_a_module_that_imports_the_face_is_a_circle():
    graph = _graph(("pkg", "pkg.kinds"), ("pkg.kinds", "pkg.text"), ("pkg.text", "pkg"), ("pkg.kinds", "pkg.base"))
    assert module_circles(graph, set(graph.modules)) == [(["pkg", "pkg.kinds", "pkg.text", "pkg"], 3)]


def test_modules_that_share_a_module_of_their_own_make_no_circle():
    graph = _graph(("pkg", "pkg.kinds"), ("pkg.kinds", "pkg.base"), ("pkg.text", "pkg.base"), ("app", "pkg"))
    assert module_circles(graph, set(graph.modules)) == []


def test_two_modules_that_import_each_other_are_a_circle_and_others_outside_it_are_not_named():
    graph = _graph(("rule", "hoisting"), ("hoisting", "rule"), ("rule", "edits"), ("hoisting", "edits"))
    assert module_circles(graph, set(graph.modules)) == [(["hoisting", "rule", "hoisting"], 2)]
