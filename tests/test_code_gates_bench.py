"""benchmarks/code_gates.py: a finding that a prefilter's code part hides is reported."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from trllint.core.prefilter import AllOf, AnyOf, Calls
from trllint.rule.registry import all_rules

REPO = Path(__file__).resolve().parent.parent
GATHERED = (
    "from accelerate import Accelerator\n\naccelerator = Accelerator()\n\n\n"
    "def sample(model, prompts):\n"
    "    return accelerator.gather(accelerator.unwrap_model(model).generate(**prompts))\n"
)
# The text passes TRL009's text parts; the code calls no gather.
SPARED = '"""The samples of every rank, as all_gather gathers them."""\nimport torch.distributed as dist\n\n\ndef total(x):\n    dist.all_reduce(x)\n    return x\n'


def _code_gates():
    spec = importlib.util.spec_from_file_location("code_gates", REPO / "benchmarks" / "code_gates.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def files(tmp_path):
    (tmp_path / "gathered.py").write_text(GATHERED, encoding="utf-8")
    (tmp_path / "spared.py").write_text(SPARED, encoding="utf-8")
    return [str(tmp_path / "gathered.py"), str(tmp_path / "spared.py")]


def test_sound_code_parts_hide_nothing(files):
    asked, spared, hidden = _code_gates()._check(files)
    assert asked >= 2 and spared >= 1  # spared.py: text passes TRL009's, its code calls no gather
    assert hidden == []


def test_a_code_part_that_hides_a_finding_is_reported(files, monkeypatch):
    rule = all_rules()["TRL009"].rule
    # A wrong gate: the finding is a call of gather, the part asks for another name.
    monkeypatch.setattr(rule, "prefilter", AllOf(AnyOf("gather"), AnyOf(Calls("gather_everything"))))
    _, _, hidden = _code_gates()._check(files)
    assert len(hidden) == 1 and "gathered.py:7:" in hidden[0] and "TRL009" in hidden[0]
