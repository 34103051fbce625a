"""Small stand-in rules for the engine's speed tests (prefilter, cache, pool).

They have what the real rules have (a prefilter, a setting, a text rule, a fix), so the engine's
machinery can be tested whatever state the rule pack is in. ``install()`` makes them the run's
rules, in this process and in any subprocess that calls it first.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from trllint.registry import RuleInfo, register_rules
from trllint.rule import Rule, Setting

HERE = Path(__file__).resolve().parent


class ConfigAttribute(Rule):
    """Every read of a watched attribute (``.config`` by default)."""

    code = "TST101"
    name = "watched-attribute"
    message = "watched attribute read"
    fixable = "always"
    # The attribute's name, not ".config": `model . config` is the same read.
    prefilter = ("config", "generation_config")
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
    prefilter = ("initialize",)

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
    prefilter = ("vllm",)
    file_patterns = ("requirements*.txt",)

    def lint_text(self) -> None:
        for number, line in enumerate(self.source.lines, start=1):
            if line.strip().startswith("vllm"):
                self.report_at(number, 0, number, len(line))


def infos() -> dict[str, RuleInfo]:
    return {rule.code: RuleInfo(rule, HERE) for rule in (ConfigAttribute, InitializeCall, PinnedVllm)}


def install() -> None:
    register_rules(infos())
