"""TRL003's configured sinks reach files that never say "deepspeed", and summaries are per file."""

from __future__ import annotations

from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

CALLER = """\
from mylab.dist import make_engine


def setup(student, teacher=None, config=None):
    student = make_engine(student, config)
    teacher = make_engine(teacher, config)
    return student, teacher
"""


def _lint(text: str, settings: dict) -> list:
    rule = all_rules()["TRL003"].rule
    return lint_source(SourceFile(text=text, display_path="caller.py"), "caller.py", RuleSet([rule], settings, preview=True))


def test_configured_sink_in_a_file_without_deepspeed():
    assert "deepspeed" not in CALLER
    findings = _lint(CALLER, {"deepspeed-sinks": ["mylab.dist.make_engine"]})
    assert [(f.line, f.code) for f in findings] == [(6, "TRL003")]
    assert "reached through mylab.dist.make_engine()" in findings[0].message


def test_unconfigured_name_is_not_a_sink():
    assert _lint(CALLER, {}) == []


def test_summary_is_computed_once_per_file(monkeypatch):
    import trllint.rules.trl003_deepspeed_initialize_none.forwarding as forwarding
    from trllint.rules.trl003_deepspeed_initialize_none import rule as trl003

    calls = []
    real = forwarding.summarise_sinks

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(trl003, "summarise_sinks", counting)
    text = "import deepspeed\n\n\ndef f(model=None):\n    deepspeed.initialize(model=model)\n"
    source = SourceFile(text=text, display_path="f.py")
    ruleset = RuleSet([all_rules()["TRL003"].rule], {}, preview=True)
    first = lint_source(source, "f.py", ruleset)
    second = lint_source(source, "f.py", ruleset)
    assert len(first) == len(second) == 1
    assert len(calls) == 1


def test_aliased_import_of_initialize():
    text = "from deepspeed import initialize as ds_init\n\n\ndef f(model=None):\n    ds_init(model=model)\n"
    assert [(f.line, f.code) for f in _lint(text, {})] == [(5, "TRL003")]
