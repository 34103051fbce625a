"""A module fact asked with ``deep_if`` tokens is not parsed for a module that spells none of them:
that gate must never hide an answer. Proved on real code: every module of a sample of the installed
trl, accelerate and deepspeed and every rule case that spells none of a gate's tokens answers
``{}`` when the fact is computed from its full LibCST model, and some that do spell them answer
something (the check can fail).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from trllint.core.source import SourceFile
from trllint.facts.in_place_reductions import NAMES_AN_IN_PLACE_COLLECTIVE, REDUCES_IN_PLACE
from trllint.rules.trl003_deepspeed_initialize_none.forwarding import CALLS_A_SINK, FORWARDS_TO_DEEPSPEED
from trllint.rules.trl004_ungathered_metric.metric_buffers import NAMES_A_METRIC_BUFFER, REDUCES_STORED_METRICS
from trllint.rules.trl006_collective_under_rank_guard.project_helpers import SPELLS_A_COLLECTIVE
from trllint.rules.trl006_collective_under_rank_guard.rule import ENTERS_A_COLLECTIVE
from trllint.semantic.model import SemanticModel

REPO = Path(__file__).resolve().parent.parent
GATED = [
    (REDUCES_IN_PLACE, NAMES_AN_IN_PLACE_COLLECTIVE),
    (REDUCES_STORED_METRICS, NAMES_A_METRIC_BUFFER),
    (FORWARDS_TO_DEEPSPEED, CALLS_A_SINK),
    (ENTERS_A_COLLECTIVE, SPELLS_A_COLLECTIVE),
]


def _installed(name: str) -> list[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))


def sample() -> list[Path]:
    """Every rule case, and every 12th module of the installed packages under 80 KB."""
    files = sorted((REPO / "rules").glob("*/cases/**/*.py"))
    installed = [p for name in ("trl", "accelerate", "deepspeed") for p in _installed(name)]
    files += [p for p in installed[::12] if p.stat().st_size < 80_000]
    return files


def answers(path: Path) -> dict[str, dict] | None:
    """Each gated fact's answer for the module, from one parse of it (None: LibCST cannot read it)."""
    source = SourceFile.from_bytes(path.read_bytes(), str(path))
    try:
        source.module
    except Exception:
        return None  # the fact is unknown either way
    try:
        model = SemanticModel.of(source)
        return {fact.key: fact.compute(model) for fact, _ in GATED}
    finally:
        source.release()


def test_a_module_that_spells_no_gate_token_answers_nothing():
    files = sample()
    assert len(files) > 100
    spelled = dict.fromkeys((fact.key for fact, _ in GATED), 0)
    answered = dict(spelled)
    for path in files:
        found = answers(path)
        if found is None:
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for fact, gate in GATED:
            if gate.holds(text, {}):
                spelled[fact.key] += 1
                answered[fact.key] += bool(found[fact.key])
            else:
                assert found[fact.key] == {}, (fact.key, path)
    # Modules that spell a token, and some that answer: the gates are not vacuous.
    assert all(spelled.values()) and all(answered.values()), (spelled, answered)


def _answer(tmp_path: Path, text: str, fact) -> dict:
    path = tmp_path / "helpers.py"
    path.write_text(text, encoding="utf-8")
    found = answers(path)
    assert found is not None
    return found[fact.key]


def test_a_name_that_only_starts_like_a_sink_passes_no_gate(tmp_path):
    # kohya-ss/sd-scripts' train_util.py: `deepspeed_utils.prepare_deepspeed_plugin(args)`, and
    # "reduce" / "gather" in comments and `asyncio.gather`, with no torch.distributed.
    text = (
        "import asyncio\nfrom library import deepspeed_utils\n\n"
        "def prepare_accelerator(args):\n"
        "    # gather the plugin first, to reduce memory\n"
        "    plugin = deepspeed_utils.prepare_deepspeed_plugin(args)\n"
        "    return asyncio.gather(plugin)\n"
    )
    assert not CALLS_A_SINK.holds(text, {}) and not NAMES_AN_IN_PLACE_COLLECTIVE.holds(text, {})
    assert _answer(tmp_path, text, FORWARDS_TO_DEEPSPEED) == {}
    assert _answer(tmp_path, text, REDUCES_IN_PLACE) == {}


def test_a_function_named_initialize_or_ending_in_it_passes_no_gate(tmp_path):
    # DeepSpeed's utils/groups.py defines a deprecated `initialize`; its data_routing/helper.py
    # calls `model.random_ltd_initialize()`. Neither calls deepspeed.initialize.
    text = (
        "def initialize(ep_size=1, mpu=None):\n    return ep_size\n\n\n"
        "async def setup(model):\n    model.random_ltd_initialize()\n    return model\n"
    )
    assert not CALLS_A_SINK.holds(text, {})
    assert _answer(tmp_path, text, FORWARDS_TO_DEEPSPEED) == {}
    # The spellings that do call it still pass, each on its own.
    for call in ("ds.initialize(model=model)", "initialize (model=model)", "deepspeed.initialize(model=model)"):
        imported = "import deepspeed as ds" if call.startswith("ds.") else "from deepspeed import initialize"
        forwards = f"{imported}\nimport deepspeed\n\n\ndef build(model):\n    return {call}\n"
        assert CALLS_A_SINK.holds(forwards, {}), call
        assert _answer(tmp_path, forwards, FORWARDS_TO_DEEPSPEED) == {"build": [["model", 0]]}, call


def test_the_gates_hold_for_the_spellings_that_answer(tmp_path):
    forwards = (
        "from trl.models.utils import prepare_deepspeed as prep\n\n"
        "def wrap(model, args):\n    return prep(model, args)\n"
    )
    assert CALLS_A_SINK.holds(forwards, {})
    assert _answer(tmp_path, forwards, FORWARDS_TO_DEEPSPEED) == {"wrap": [["model", 0]]}
    for imported, call in [
        ("import torch.distributed as dist", "dist.all_reduce(t)"),
        ("import torch", "torch.distributed.all_reduce(t)"),
        ("from torch import distributed as d", "d.all_reduce(t)"),
        ("from torch.distributed import all_reduce", "all_reduce(t)"),
        ("from torch import distributed", "distributed.all_reduce(t)"),
        ("from torch import (\n    distributed as td,\n)", "td.all_reduce(t)"),
        ("from dist import all_reduce", "all_reduce(t)"),
        ("import os  # `dist` is set up elsewhere", "dist.all_reduce(t)"),
    ]:
        text = f"{imported}\n\ndef mean(t):\n    {call}\n    return t\n"
        assert NAMES_AN_IN_PLACE_COLLECTIVE.holds(text, {}), imported
        assert _answer(tmp_path, text, REDUCES_IN_PLACE) == {"mean": [0]}, imported


def test_the_call_gate_holds_for_the_calls_that_answer(tmp_path):
    docstring_only = '"""Call deepspeed.initialize() after this; see groups.initialize()."""\nimport deepspeed\n\ndef initialize(ep_size=1):\n    return ep_size\n'
    assert CALLS_A_SINK.holds(docstring_only, {})
    assert _answer(tmp_path, docstring_only, FORWARDS_TO_DEEPSPEED) == {}
    for text, calls in [
        (docstring_only, False),
        ("import deepspeed\n\ndef build(model):\n    return deepspeed.initialize(model=model)\n", True),
        ("from deepspeed import initialize as start\n\ndef build(model):\n    return start(model=model)\n", True),
        ("from trl.models.utils import prepare_deepspeed\n\ndef wrap(model, a):\n    return prepare_deepspeed(model, a)\n", True),
    ]:
        if calls:
            assert _answer(tmp_path, text, FORWARDS_TO_DEEPSPEED) != {}, text
