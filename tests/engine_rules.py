"""The engine's test rules, one set: small rules that exercise the engine, not any training bug.

Their codes (TST*, TRL9xx) are never shipped; the engine's tests run with them so that they hold
whatever state the rule pack is in.

- For the CLI tests (``TEST_RULES``, the ``engine_rules`` fixture): a safe fix (TST001), an unsafe
  fix with a setting (TST002), nested overlapping fixes (TST003), a fix that breaks the syntax
  (TST004), a text rule (TST005).
- Stand-ins for the real rules in the speed tests (``SPEED_RULES``: prefilter, cache, pool): a
  prefilter, a setting, a text rule, a fix (TST101-TST103). ``install_speed_rules()`` makes them
  the run's rules, in this process and in any subprocess that calls it first.
- For the robustness tests (``ROBUSTNESS_RULES``, run with the pack by ``run_cli``):
  ``ParenthesizeInteger`` (TRL901) fixes something in almost every file: ``1`` becomes ``(1)``,
  deterministic and settled in one round, so a fully fixed file is well defined;
  ``PassToEllipsis`` (TRL902) rewrites ``pass`` as ``...``, a statement-level fix;
  ``CrashingRule`` (TRL998) raises inside its visitor on any file that mentions ``explode``;
  ``BreakingFixRule`` (TRL997) offers a fix that turns ``pass`` into code that does not parse.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from trllint.rule.registry import RuleInfo, all_rules, register_rules
from trllint.rule.base import AnyOf, Edit, Rule, Setting

HERE = Path(__file__).resolve().parent
RULE_DOCS = HERE / "fixtures" / "rule_docs"  # the README that --explain prints for every test rule
REPO = HERE.parent
ENTRY = HERE / "fixtures" / "trllint_with_test_rules.py"


# ---- for the CLI tests ---------------------------------------------------------------------

class PrintCall(Rule):
    """``print(...)`` -> ``log(...)``: a safe fix on a call's name."""

    code = "TST001"
    name = "print-call"
    message = "print() in training code; use log()"
    fixable = "always"
    prefilter = AnyOf("print")

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            self.report(node, fix=self.fix(self.replace(node.func, cst.Name("log"))))


class AssertStatement(Rule):
    """``assert x`` -> ``check(x)``: an unsafe fix (it changes behaviour under -O)."""

    code = "TST002"
    name = "assert-statement"
    message = "assert in library code; call check()"
    fixable = "always"
    prefilter = AnyOf("assert")
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
    prefilter = AnyOf("step")

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
    prefilter = AnyOf("todo")

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "todo":
            start, end = self.span_of(node)
            self.report(node, fix=self.fix(Edit(start, end, "todo(")))


class RequirementsNote(Rule):
    """Reads requirements files as text: the engine's non-Python path."""

    code = "TST005"
    name = "pinned-requirement"
    message = "exact pin in requirements"
    prefilter = AnyOf("==")
    file_patterns = ("requirements*.txt",)

    def lint_text(self) -> None:
        for index, line in enumerate(self.source.lines):
            column = line.find("==")
            if column >= 0 and not line.lstrip().startswith("#"):
                self.report_at(index + 1, column, index + 1, column + 2)


TEST_RULES = {
    rule.code: RuleInfo(rule, RULE_DOCS)
    for rule in (PrintCall, AssertStatement, NestedCallWrap, BreaksSyntax, RequirementsNote)
}


# ---- stand-ins for the real rules in the speed tests -----------------------------------------

class ConfigAttribute(Rule):
    """Every read of a watched attribute (``.config`` by default)."""

    code = "TST101"
    name = "watched-attribute"
    message = "watched attribute read"
    fixable = "always"
    # The attribute's name, not ".config": `model . config` is the same read.
    prefilter = AnyOf("config", "generation_config")
    settings_schema = {
        "watched-attributes": Setting(list, ["config"], "attribute names to report", item_kind=str),
    }

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in self.settings["watched-attributes"]:
            self.report(node, fix=self.fix(self.insert_before(node, "")))


class InitializeCall(Rule):
    """Every call of something named ``initialize``."""

    code = "TST102"
    name = "initialize-call"
    message = "initialize called"
    prefilter = AnyOf("initialize")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if name == "initialize":
            self.report(node)


class PinnedVllm(Rule):
    """A requirements line that names vllm (a text rule)."""

    code = "TST103"
    name = "vllm-requirement"
    message = "vllm requirement"
    prefilter = AnyOf("vllm")
    file_patterns = ("requirements*.txt",)

    def lint_text(self) -> None:
        for number, line in enumerate(self.source.lines, start=1):
            if line.strip().startswith("vllm"):
                self.report_at(number, 0, number, len(line))


SPEED_RULES = (ConfigAttribute, InitializeCall, PinnedVllm)


def speed_rule_infos() -> dict[str, RuleInfo]:
    return infos(SPEED_RULES)


def install_speed_rules() -> None:
    register_rules(speed_rule_infos())


# ---- for the robustness tests -----------------------------------------------------------------

class ParenthesizeInteger(Rule):
    code = "TRL901"
    name = "test-parenthesize-integer"
    message = "integer literal without parentheses (engine test rule)"
    fixable = "always"

    def __init__(self, source, settings=None):
        super().__init__(source, settings)
        self._pattern_depth = 0

    # `case -1:` cannot become `case -(1):`; literal patterns are left alone.
    def visit_MatchCase_pattern(self, node: cst.MatchCase) -> None:
        self._pattern_depth += 1

    def leave_MatchCase_pattern(self, node: cst.MatchCase) -> None:
        self._pattern_depth -= 1

    def visit_Integer(self, node: cst.Integer) -> None:
        if self._pattern_depth or node.lpar:
            return
        wrapped = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.report(node, fix=self.fix(self.replace(node, wrapped)))


class PassToEllipsis(Rule):
    code = "TRL902"
    name = "test-pass-to-ellipsis"
    message = "pass statement (engine test rule)"
    fixable = "always"
    prefilter = AnyOf("pass")

    def visit_Pass(self, node: cst.Pass) -> None:
        # The statement owns its trailing semicolon: `pass; x` must stay two statements.
        self.report(node, fix=self.fix(self.replace(node, cst.Expr(cst.Ellipsis(), semicolon=node.semicolon))))


class CrashingRule(Rule):
    code = "TRL998"
    name = "test-crashing-rule"
    message = "never reported: this rule raises instead (engine test rule)"
    prefilter = AnyOf("explode")

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "explode":
            raise ZeroDivisionError("the test rule blew up on purpose")


class BreakingFixRule(Rule):
    code = "TRL997"
    name = "test-breaking-fix"
    message = "pass statement whose fix does not parse (engine test rule)"
    fixable = "always"
    prefilter = AnyOf("pass")

    def visit_Pass(self, node: cst.Pass) -> None:
        start, end = self.span_of(node)
        self.report(node, fix=self.fix(Edit(start, end, "pass pass")))


SOUND_FIXING_RULES = (ParenthesizeInteger, PassToEllipsis)
ROBUSTNESS_RULES = (ParenthesizeInteger, PassToEllipsis, CrashingRule, BreakingFixRule)


def infos(rules) -> dict[str, RuleInfo]:
    return {rule.code: RuleInfo(rule, RULE_DOCS) for rule in rules}


def register_pack_and(rules) -> dict[str, RuleInfo]:
    """Every rule of the pack (whatever exists now) plus ``rules``; returns what was registered."""
    register_rules({})
    combined = {**all_rules(), **infos(rules)}
    register_rules(combined)
    return combined


def register_only(rules) -> dict[str, RuleInfo]:
    chosen = infos(rules)
    register_rules(chosen)
    return chosen


def run_cli(*args: str, cwd: Path, rules: tuple[str, ...] = (), timeout: int = 300):
    """``trllint ARGS`` in a subprocess, with the pack and the chosen test rules (default: the sound fixers)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["TRLLINT_TEST_RULES"] = ",".join(rules)
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, str(ENTRY), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
