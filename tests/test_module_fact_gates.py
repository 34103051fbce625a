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
from trllint.facts.rank_flow import _NAMES_AN_IN_PLACE_COLLECTIVE, REDUCES_IN_PLACE
from trllint.rules.trl004_ungathered_metric.metric_buffers import NAMES_A_METRIC_BUFFER, REDUCES_STORED_METRICS
from trllint.semantic.model import SemanticModel

REPO = Path(__file__).resolve().parent.parent
GATED = [(REDUCES_IN_PLACE, _NAMES_AN_IN_PLACE_COLLECTIVE), (REDUCES_STORED_METRICS, NAMES_A_METRIC_BUFFER)]


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
