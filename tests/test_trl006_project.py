"""TRL006 across modules: a function of another module of the project that enters a collective.

The module that defines it is read as the rule reads a function of the linted file: a collective
its body reaches with no rank guard of its own, and the backends under which it is one. A call of
it under a rank guard is then a collective under that guard.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from trllint.core.source import SourceFile
from trllint.rules.trl006_collective_under_rank_guard.guard_syntax import switched_off
from trllint.rules.trl006_collective_under_rank_guard.rule import ENTERS_A_COLLECTIVE, FORWARDS_A_PARAMETER
from trllint.semantic.model import SemanticModel

HELPERS = """
import torch
import torch.distributed as dist


def synchronized_save(model, path):
    torch.save(model.state_dict(), path)
    dist.barrier()


def full_state(accelerator, model):
    return accelerator.get_state_dict(model)


def save_on_main(accelerator, model, path):
    if accelerator.is_main_process:
        dist.barrier()


def save_after_exit(model, path):
    if dist.get_rank() != 0:
        return
    dist.barrier()


def write(state, path):
    torch.save(state, path)


def write_and_sync(state, path, synchronize=True):
    torch.save(state, path)
    if synchronize:
        dist.barrier()
"""


def _answer(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "helpers.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    source = SourceFile.from_bytes(path.read_bytes(), str(path))
    try:
        return ENTERS_A_COLLECTIVE.compute(SemanticModel.of(source))
    finally:
        source.release()


def test_a_function_that_enters_a_collective_on_every_rank_is_named_with_its_backends(tmp_path: Path):
    answer = _answer(tmp_path, HELPERS)
    assert answer["synchronized_save"] == {"label": "dist.barrier", "line": 8, "backends": None}
    assert answer["full_state"] == {"label": "accelerator.get_state_dict", "line": 12, "backends": ["FSDP", "ZERO3"]}


def test_a_function_that_guards_its_collective_or_does_rank_local_work_is_left_out(tmp_path: Path):
    answer = _answer(tmp_path, HELPERS)
    assert "save_on_main" not in answer  # under its own rank test
    assert "save_after_exit" not in answer  # after its own per-rank exit
    assert "write" not in answer  # torch.save: this rank's own work
    assert "write_and_sync" not in answer  # its caller may switch the barrier off


FORWARDS = """
import torch
import torch.distributed as dist

scorer = torch.nn.Linear(8, 8)


def _forward(model, batch):
    return model(batch)


def logprobs(model, batch, temperature=1.0):
    return _forward(model, batch) / temperature


def generate_for(tokenizer, model, prompts):
    return model.module.generate(**tokenizer(prompts))


def score(batch):
    return scorer(batch)


def logprobs_on_main(model, batch):
    if dist.get_rank() == 0:
        return model(batch)


def maybe_logprobs(model, batch, enabled=False):
    if enabled:
        return model(batch)
"""


def test_a_function_that_runs_a_forward_of_its_parameter_names_it_by_position(tmp_path: Path):
    path = tmp_path / "helpers.py"
    path.write_text(textwrap.dedent(FORWARDS), encoding="utf-8")
    source = SourceFile.from_bytes(path.read_bytes(), str(path))
    try:
        model = SemanticModel.of(source)
        answer = FORWARDS_A_PARAMETER.compute(model)
        entered = ENTERS_A_COLLECTIVE.compute(model)
    finally:
        source.release()
    # A forward of a DeepSpeed engine is a collective under ZeRO-3: the caller's argument decides.
    assert answer["_forward"] == {"position": 0, "parameter": "model", "line": 9}
    assert answer["logprobs"] == {"position": 0, "parameter": "model", "line": 9}  # through _forward
    assert answer["generate_for"]["position"] == 1
    assert "score" not in answer  # a model of the module's own, not the caller's
    assert "logprobs_on_main" not in answer  # under its own rank test
    assert "maybe_logprobs" not in answer  # its caller may switch the forward off
    assert entered == {}  # no collective of its own: which model it runs is the caller's


# ---- a parameter a caller switches off (guard_syntax.switched_off) ---------------------------


@pytest.mark.parametrize(
    "definition, call, off",
    [
        ("def save(d, sync=True): pass", "save('x', sync=False)", {"sync"}),
        ("def save(d, sync=True): pass", "save('x', False)", {"sync"}),
        ("def save(d, sync=True): pass", "save('x', 0)", {"sync"}),
        ("def save(d, sync=True): pass", "save('x', None)", {"sync"}),
        ("def save(d, sync=True): pass", "save('x', flag)", set()),  # not a constant
        ("def save(d, sync=True): pass", "save(False)", {"d"}),
        # a method called on an object: the first parameter is self, not the first argument's
        ("def save(self, full=True): pass", "self.save(False)", {"full"}),
        ("def save(self, full=True): pass", "trainer.save(False)", {"full"}),
        # a keyword-only parameter takes no positional argument; after *args, positions are unknown
        ("def save(d, *extra, sync=True): pass", "save('x', None)", set()),
        ("def save(d, *, sync=True): pass", "save('x', sync=False)", {"sync"}),
        ("def save(d, sync=True): pass", "save(*args, False)", set()),
        ("def save(d, sync=True): pass", "save(*args, sync=False)", {"sync"}),
        # bound again in the function: the constant is not what the test reads
        ("def save(d, sync=True):\n    sync = sync or d\n", "save('x', False)", set()),
    ],
)
def test_switched_off(definition, call, off):
    function = cst.parse_module(definition).body[0]
    assert isinstance(function, cst.FunctionDef)
    assert switched_off(cst.parse_expression(call), function) == off
