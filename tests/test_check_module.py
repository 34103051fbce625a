"""``Rule.check_module``: the whole-file hook the engine calls once per file, after the traversal."""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.engine.lint import lint_source, read_source
from trllint.rule.base import AnyOf, Rule
from trllint.rule.ruleset import RuleSet
from trllint.semantic.model import SemanticModel

# What the stand-in rules saw, in order: ("check", path, whether the model is the file's one
# model) and ("visit", path, function name).
EVENTS: list[tuple] = []


class TodoFunction(Rule):
    """Declares only check_module: flags every top-level ``def todo...`` of the file."""

    code = "TST201"
    name = "todo-function"
    message = "a todo function is left in the file"
    prefilter = AnyOf("todo")

    def check_module(self, model: SemanticModel) -> None:
        EVENTS.append(("check", self.source.display_path, model is SemanticModel.of(self.source)))
        for statement in model.source.module.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value.startswith("todo"):
                self.report(statement.name)


class FunctionVisitor(Rule):
    """A visiting rule beside it: records each function it visits, reports nothing."""

    code = "TST202"
    name = "function-visitor"
    message = "never reported"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        EVENTS.append(("visit", self.source.display_path, node.name.value))


class ExplodingCheck(Rule):
    code = "TST203"
    name = "exploding-check"
    message = "never reported"

    def check_module(self, model: SemanticModel) -> None:
        raise ValueError("boom")


SOURCE = "def todo_one():\n    pass\n\n\ndef done():\n    pass\n\n\ndef todo_two():  # noqa: TST201\n    pass\n"


def lint(text: str, path: str, *rules: type[Rule]) -> list:
    source = read_source(text.encode(), path, path)
    return lint_source(source, path, RuleSet(list(rules)))


def test_a_rule_of_check_module_alone_is_called_once_per_file_with_the_files_model():
    EVENTS.clear()
    first = lint(SOURCE, "a.py", TodoFunction)
    second = lint(SOURCE, "b.py", TodoFunction)
    assert EVENTS == [("check", "a.py", True), ("check", "b.py", True)]
    # Reported like a visit's finding; the noqa on todo_two suppresses that one.
    for findings in (first, second):
        assert [(f.code, f.line, f.column, f.message) for f in findings] == [
            ("TST201", 1, 5, "a todo function is left in the file")
        ]


def test_a_rule_of_check_module_alone_takes_no_part_in_the_traversal(monkeypatch):
    traversals = []
    real_visit_batched = walk.visit_batched
    monkeypatch.setattr(
        walk, "visit_batched", lambda node, visitors: traversals.append(list(visitors)) or real_visit_batched(node, visitors)
    )
    assert not TodoFunction.visits_nodes() and TodoFunction.checks_module()
    assert FunctionVisitor.visits_nodes() and not FunctionVisitor.checks_module()

    lint(SOURCE, "a.py", TodoFunction)
    assert traversals == []

    lint(SOURCE, "a.py", TodoFunction, FunctionVisitor)
    assert [[type(v) for v in visitors] for visitors in traversals] == [[FunctionVisitor]]


def test_check_module_runs_after_every_rules_visits():
    EVENTS.clear()
    lint(SOURCE, "a.py", TodoFunction, FunctionVisitor)
    assert [event[:2] for event in EVENTS] == [("visit", "a.py")] * 3 + [("check", "a.py")]


def test_a_check_module_that_raises_is_a_trl999_and_the_other_rules_still_report():
    findings = lint(SOURCE, "a.py", ExplodingCheck, TodoFunction)
    assert [f.code for f in findings] == ["TRL999", "TST201"]
    internal = next(f for f in findings if f.code == "TRL999")
    assert "rule TST203 (exploding-check) failed on this file: ValueError: boom" in internal.message


def test_calls_in_is_every_call_in_traversal_order_walked_once_per_file():
    from trllint.facts.calls import calls_in

    source = read_source(b"outer(inner(1), key=deep(other()))\ndef f():\n    return last()\n", "a.py", "a.py")
    model = SemanticModel.of(source)
    calls = calls_in(model)
    assert [source.module.code_for_node(call.func) for call in calls] == ["outer", "inner", "deep", "other", "last"]
    assert calls_in(model) is calls
