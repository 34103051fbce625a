"""Generated Python (hypothesmith): no rule raises, and every fix leaves code that parses,
compiles and is stable under a second ``--fix``.

Every rule of the pack runs (whatever rules exist when the test runs), plus the engine test rules
that fix something in almost every program. The default run is derandomized (a fixed seed) with
``TRLLINT_HYPOTHESIS_EXAMPLES`` examples per strategy (CI: the default); the ``slow`` test runs
``TRLLINT_HYPOTHESIS_SLOW_EXAMPLES`` more.
"""

from __future__ import annotations

import os

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.engine_rules import SOUND_FIXING_RULES
from trllint.engine.fix_loop import fix_source
from trllint.engine.inputs.python import compiles
from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

EXAMPLES = int(os.environ.get("TRLLINT_HYPOTHESIS_EXAMPLES", "60"))
SLOW_EXAMPLES = int(os.environ.get("TRLLINT_HYPOTHESIS_SLOW_EXAMPLES", "1500"))
ENGINE_CODES = {"TRL000", "TRL999"}
# Valid Python that LibCST does not parse: nesting past its recursion limit, and a file that
# ends in a backslash continuation (CPython accepts `x\\` + newline at the very end).
LIBCST_GAPS = ("nests too deeply", "unexpected end of file after a line continuation")
UNREPRODUCED = "fixes were not applied: LibCST does not reproduce this file exactly; please report it"


def every_rule() -> RuleSet:
    # Preview on: the preview findings and their fixes meet the generated programs too.
    return RuleSet([info.rule for info in all_rules().values()] + list(SOUND_FIXING_RULES), preview=True)


def check_program(text: str, *, unsafe: bool, generated: bool = True) -> None:
    if generated:
        assume(compiles(text))  # hypothesmith's grammar allows a few programs CPython rejects
    else:
        assert compiles(text)
    ruleset = every_rule()
    source = SourceFile(text=text, display_path="generated.py")
    findings = lint_source(source, "generated.py", ruleset)
    crashes = [f.message for f in findings if f.code == "TRL999"]
    assert not crashes, crashes
    if any(f.code == "TRL000" for f in findings):
        # Only what LibCST is known not to take may be refused (reported, never a crash).
        refused = [f.message for f in findings if f.code == "TRL000"]
        assert all(any(gap in message for gap in LIBCST_GAPS) for message in refused), refused
        return
    outcome = fix_source(source, "generated.py", ruleset, unsafe=unsafe)
    if "\f" in text and outcome.problems == [UNREPRODUCED]:
        # A known LibCST gap: around a form feed it can drop a line ('\n0\n\n #\x0c' comes back
        # without its blank line), so no position is trusted and nothing is fixed or written.
        assert outcome.text == text and outcome.applied == 0
        return
    assert outcome.problems == [], outcome.problems
    assert not [f for f in outcome.findings if f.code in ENGINE_CODES], outcome.findings
    if outcome.text != text:
        cst.parse_module(outcome.text)
        assert compiles(outcome.text), outcome.text
        again = fix_source(SourceFile(text=outcome.text, display_path="generated.py"), "generated.py", ruleset, unsafe=unsafe)
        assert again.text == outcome.text and again.applied == 0
    assert not [f for f in outcome.findings if f.fix is not None and (unsafe or f.fix.applicability == "safe")]


def _settings(examples: int):
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


programs = st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())


@_settings(EXAMPLES)
@given(text=programs, unsafe=st.booleans())
def test_generated_programs(text: str, unsafe: bool):
    check_program(text, unsafe=unsafe)


@pytest.mark.slow
@_settings(SLOW_EXAMPLES)
@given(text=programs, unsafe=st.booleans())
def test_generated_programs_many(text: str, unsafe: bool):
    check_program(text, unsafe=unsafe)


# Hand-picked programs that generated ones reach rarely: form feeds, CRLF, tabs, match patterns.
@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n\x0cy = 2\n\x0c\x0cz = [3]\nif x:\n    pass\n\x0c    w = 4\n",
        "a = 1\r\nif a:\r\n\tpass\r\n",
        "match x:\n    case -1 | 2:\n        pass\n    case {1: y}:\n        z = 3\n",
        "def f(a=1, /, b=2, *, c=3):\n    return f'{a!r:>{10}}'\n",
        "x = (  # c\n    1\n)\nasync def g():\n    async with a as b:\n        await c(1)\n",
        # Found by hypothesmith in CI: LibCST drops the blank line before a last comment that
        # holds a form feed; the engine then fixes nothing rather than misplace an edit.
        "\n0\n\n #\x0c",
    ],
)
def test_awkward_programs(text: str):
    check_program(text, unsafe=True, generated=False)
