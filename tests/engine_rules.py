"""Small rules that exercise the engine without depending on the real rule pack."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from trllint.registry import RuleInfo
from trllint.rule import Rule, Setting

HERE = Path(__file__).parent


class PrintCall(Rule):
    """``print(...)`` -> ``log(...)``: a safe fix on a call's name."""

    code = "TST001"
    name = "print-call"
    message = "print() in training code; use log()"
    fixable = "always"
    prefilter = ("print",)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            self.report(node, fix=self.fix(self.replace(node.func, cst.Name("log"))))


class AssertStatement(Rule):
    """``assert x`` -> ``check(x)``: an unsafe fix (it changes behaviour under -O)."""

    code = "TST002"
    name = "assert-statement"
    message = "assert in library code; call check()"
    fixable = "always"
    prefilter = ("assert",)
    settings_schema = {"check-function": Setting(str, "check", "name of the checking function")}

    def visit_Assert(self, node: cst.Assert) -> None:
        call = cst.Expr(cst.Call(cst.Name(self.settings["check-function"]), [cst.Arg(node.test)]))
        self.report(node, fix=self.fix(self.replace(node, call), unsafe=True))


class NestedCallWrap(Rule):
    """Wraps every ``step(...)`` argument in ``g(...)``; nested calls overlap, so rounds matter."""

    code = "TST003"
    name = "nested-step"
    message = "step() argument not wrapped in g()"
    fixable = "always"
    prefilter = ("step",)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "step" and node.args:
            arg = node.args[0].value
            if not (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Name) and arg.func.value == "g"):
                wrapped = cst.Call(cst.Name("g"), [cst.Arg(arg)])
                self.report(node, fix=self.fix(self.replace(arg, wrapped)))


class BreaksSyntax(Rule):
    """A buggy fix: its output does not parse, so the engine must refuse to write it."""

    code = "TST004"
    name = "breaks-syntax"
    message = "TODO marker"
    fixable = "always"
    prefilter = ("todo",)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "todo":
            start, end = self.span_of(node)
            from trllint.rule import Edit

            self.report(node, fix=self.fix(Edit(start, end, "todo(")))


class RequirementsNote(Rule):
    """Reads requirements files as text: the engine's non-Python path."""

    code = "TST005"
    name = "pinned-requirement"
    message = "exact pin in requirements"
    prefilter = ("==",)
    file_patterns = ("requirements*.txt",)

    def lint_text(self) -> None:
        for index, line in enumerate(self.source.lines):
            column = line.find("==")
            if column >= 0 and not line.lstrip().startswith("#"):
                self.report_at(index + 1, column, index + 1, column + 2)


TEST_RULES = {
    rule.code: RuleInfo(rule, HERE / "fixtures" / "rule_docs")
    for rule in (PrintCall, AssertStatement, NestedCallWrap, BreaksSyntax, RequirementsNote)
}
