"""A rule that needs a new fact about other modules declares a ModuleFact and edits no shared schema.

The facts here are declared by the test, as a rule would declare its own beside it: asked of one
module of a small project, each is computed only then (not for the modules nobody asked about,
not the facts nobody asked for), kept by content (on disk, and for a copy of the module under
another name), and a new version of one fact recomputes that fact alone.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.core.prefilter import AnyOf
from trllint.core.source import SourceFile
from trllint.semantic.model import SemanticModel
from trllint.semantic.project import modules as project_module
from trllint.semantic.project.index import use_cache_folder
from trllint.semantic.project.summaries import ModuleFact, registered_facts
from trllint.semantic.project.file_view import project_view

HELPERS = """
    def first(x):
        if x:
            return 1
        return 2


    def second():
        pass
"""

# Which modules each fact was computed for, in order.
computed: dict[str, list[str]] = {"returns": [], "parameters": []}


def _count_returns(model: SemanticModel) -> dict[str, int]:
    computed["returns"].append(Path(model.source.display_path).name)
    counts = {}
    for statement in model.source.module.body:
        if isinstance(statement, cst.FunctionDef):
            found: list[cst.Return] = []

            class Returns(cst.CSTVisitor):
                def visit_Return(self, node: cst.Return) -> None:
                    found.append(node)

            statement.visit(Returns())
            counts[statement.name.value] = len(found)
    return counts


def _count_parameters(model: SemanticModel) -> dict[str, int]:
    computed["parameters"].append(Path(model.source.display_path).name)
    return {
        s.name.value: len(s.params.params) for s in model.source.module.body if isinstance(s, cst.FunctionDef)
    }


RETURN_COUNT = ModuleFact("test.return-count", 1, _count_returns)
PARAMETER_COUNT = ModuleFact("test.parameter-count", 1, _count_parameters)


@pytest.fixture(autouse=True)
def fresh(tmp_path: Path):
    for modules in computed.values():
        modules.clear()
    use_cache_folder(tmp_path / "cache")
    yield
    use_cache_folder(None)


def project(root: Path, files: dict[str, str]) -> None:
    for name, text in {"pyproject.toml": "", **files}.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")


def view_of(path: Path):
    source = SourceFile.from_bytes(path.read_bytes(), path.name)
    source.path = path
    return project_view(SemanticModel.of(source))


def ask(path: Path, local_name: str, fact: ModuleFact, deep_if: AnyOf | None = None):
    view = view_of(path)
    function = view.function(local_name)
    answer = view.fact(function, fact, deep_if)
    return None if answer is None else answer.get(function.name)


def test_a_fact_is_registered_by_declaring_it():
    assert registered_facts()["test.return-count"] is RETURN_COUNT
    # The facts the linter declares register when their modules are imported, by the modules themselves.
    import trllint.facts.rank_flow  # noqa: F401
    import trllint.rules.trl003_deepspeed_initialize_none.forwarding  # noqa: F401

    assert {"rank-flow.returns", "trl003.forwards-to-deepspeed"} <= set(registered_facts())
    with pytest.raises(ValueError, match="two module facts are named 'rank-flow.returns'"):
        ModuleFact("rank-flow.returns", 1, _count_returns)


def test_a_fact_is_computed_only_when_asked_and_only_of_the_module_asked(tmp_path: Path):
    project(tmp_path, {"helpers.py": HELPERS, "other.py": HELPERS.replace("first", "third"),
                       "train.py": "from helpers import first, second\nfrom other import third\n"})
    view = view_of(tmp_path / "train.py")
    assert view.function("first") is not None and view.function("third") is not None
    assert computed == {"returns": [], "parameters": []}  # where a name leads costs no fact
    assert ask(tmp_path / "train.py", "first", RETURN_COUNT) == 2
    assert ask(tmp_path / "train.py", "second", RETURN_COUNT) == 0
    assert computed == {"returns": ["helpers.py"], "parameters": []}


def test_a_fact_is_kept_by_content_on_disk_and_for_a_copy(tmp_path: Path, monkeypatch):
    project(tmp_path, {"helpers.py": HELPERS, "duplicate.py": HELPERS,
                       "train.py": "from helpers import first\nfrom duplicate import second\n"})
    assert ask(tmp_path / "train.py", "first", RETURN_COUNT) == 2
    assert ask(tmp_path / "train.py", "second", RETURN_COUNT) == 0  # the copy: same content, same answer
    assert computed["returns"] == ["helpers.py"]

    use_cache_folder(tmp_path / "cache")  # a new run: nothing in memory

    def no_parse(path, data):
        raise AssertionError(f"a warm run parsed {path}")

    monkeypatch.setattr(project_module, "_parse", no_parse)
    assert ask(tmp_path / "train.py", "first", RETURN_COUNT) == 2
    assert computed["returns"] == ["helpers.py"]


def test_a_new_version_of_a_fact_recomputes_that_fact_alone(tmp_path: Path):
    project(tmp_path, {"helpers.py": HELPERS, "train.py": "from helpers import first\n"})
    assert ask(tmp_path / "train.py", "first", RETURN_COUNT) == 2
    assert ask(tmp_path / "train.py", "first", PARAMETER_COUNT) == 1
    assert computed == {"returns": ["helpers.py"], "parameters": ["helpers.py"]}

    bumped = ModuleFact("test.return-count", 2, _count_returns)
    try:
        use_cache_folder(tmp_path / "cache")  # the next run, with the rule's new version
        assert ask(tmp_path / "train.py", "first", bumped) == 2
        assert ask(tmp_path / "train.py", "first", PARAMETER_COUNT) == 1
        assert computed == {"returns": ["helpers.py", "helpers.py"], "parameters": ["helpers.py"]}
        [cache_file] = (tmp_path / "cache").rglob("*.json")
        assert set(json.loads(cache_file.read_text())) == {"test.return-count@2", "test.parameter-count@1", project_module.OUTLINE}
    finally:
        ModuleFact("test.return-count", 1, _count_returns)  # the declaration other tests read


def test_a_module_that_spells_none_of_the_tokens_answers_nothing_unparsed(tmp_path: Path, monkeypatch):
    project(tmp_path, {"helpers.py": HELPERS, "train.py": "from helpers import first\n"})
    monkeypatch.setattr(project_module, "_parse", lambda path, data: pytest.fail(f"parsed {path}"))
    assert ask(tmp_path / "train.py", "first", RETURN_COUNT, deep_if=AnyOf("deepspeed")) is None
    assert computed["returns"] == []


def test_a_module_that_spells_none_of_a_facts_calls_answers_nothing_unparsed(tmp_path: Path, monkeypatch):
    calling = ModuleFact("test.return-count-of-callers", 1, _count_returns, calls=frozenset({"all_reduce"}))
    project(tmp_path, {"helpers.py": HELPERS, "train.py": "from helpers import first\n"})
    monkeypatch.setattr(project_module, "_parse", lambda path, data: pytest.fail(f"parsed {path}"))
    assert ask(tmp_path / "train.py", "first", calling) is None  # `{}`: nothing said of `first`
    assert computed["returns"] == []
    monkeypatch.undo()
    # Spelled anywhere (here in a comment), the module is parsed and the fact itself decides.
    project(tmp_path, {"helpers.py": textwrap.dedent(HELPERS) + "# all_reduce\n"})
    use_cache_folder(tmp_path / "cache")
    assert ask(tmp_path / "train.py", "first", calling) == 2
    assert computed["returns"] == ["helpers.py"]


def test_a_module_that_cannot_be_parsed_answers_none_and_is_tried_once(tmp_path: Path, monkeypatch):
    project(tmp_path, {"helpers.py": HELPERS, "train.py": "from helpers import first\n"})
    tried = []

    def unparsable(path, data):  # CPython read it (the outline found `first`); LibCST does not
        tried.append(path)
        raise ValueError("not a module LibCST reads")

    monkeypatch.setattr(project_module, "_parse", unparsable)
    view = view_of(tmp_path / "train.py")
    function = view.function("first")
    assert view.fact(function, RETURN_COUNT) is None and view.fact(function, PARAMETER_COUNT) is None
    assert len(tried) == 1 and computed == {"returns": [], "parameters": []}
