"""No rule's analysis grows faster than linearly with the size of a function, a class or a file.

Measured without a clock: the number of Python function calls a rule makes on a file is the same
on every run and machine, so the test compares the calls on a file of size N with those on 2N.
A linear analysis roughly doubles; a quadratic one quadruples. (TRL004 once asked, for every
method of a class, a question that reads every method of the class: 48 s on DeepSpeed's
6,000-line engine.py. This test fails on that code.)
"""

from __future__ import annotations

import cProfile
import pstats

import pytest

from trllint.rule.registry import all_rules
from trllint.rule.ruleset import RuleSet
from trllint.engine.lint import lint_source
from trllint.core.source import SourceFile

HEADER = "import torch\nimport torch.distributed as dist\nfrom accelerate import Accelerator\nimport wandb\n\n"


def trainer_class(n: int) -> str:
    """One Trainer with n methods that store per-rank metrics, read the config and log."""
    methods = "".join(
        f"    def step_{i}(self, model, inputs):\n"
        f"        loss_{i} = model(**inputs).loss\n"
        f"        self._metrics['loss_{i}'].append(loss_{i}.mean().item())\n"
        f"        width = self.model.config.hidden_size + {i}\n"
        f"        self.log({{'loss_{i}': loss_{i}.item(), 'w': width}})\n"
        f"        return self.step_{max(i - 1, 0)}(model, inputs)\n"
        for i in range(n)
    )
    return (
        HEADER
        + "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
        + "    def __init__(self, model):\n        self.accelerator = Accelerator()\n"
        + "        self.model = self.accelerator.prepare(model)\n        self._metrics = {}\n\n"
        + methods
    )


def long_loop(n: int) -> str:
    """One training function whose loop rebinds the loss and logs it on every other line."""
    lines = "".join(
        f"        loss = loss + model(batch).loss * {i}\n"
        f"        if accelerator.is_main_process:\n"
        f"            wandb.log({{'loss': loss.item(), 'cfg': model.config.vocab_size}})\n"
        for i in range(n)
    )
    return (
        HEADER
        + "def train(model, loader):\n    accelerator = Accelerator()\n"
        + "    model, loader = accelerator.prepare(model, loader)\n    loss = 0\n"
        + "    for batch in loader:\n"
        + lines
    )


def many_functions(n: int) -> str:
    """n helpers that call each other, guard on the rank and reach collectives and DeepSpeed."""
    return HEADER + "import deepspeed\n\n" + "".join(
        f"def helper_{i}(model, t, ref=None):\n"
        f"    if dist.get_rank() == 0:\n"
        f"        dist.barrier()\n"
        f"    engine, *_ = deepspeed.initialize(model=ref, config={{}})\n"
        f"    accelerator = Accelerator()\n"
        f"    m = accelerator.prepare_model(model, evaluation_mode=True)\n"
        f"    return helper_{max(i - 1, 0)}(m, t * 2) + t.sum()\n\n"
        for i in range(n)
    )


SHAPES = {"trainer_class": trainer_class, "long_loop": long_loop, "many_functions": many_functions}


def _calls(code: str, text: str) -> int:
    source = SourceFile(text=text, display_path="train.py")
    source.module  # parsing is LibCST's cost, not the rule's
    ruleset = RuleSet([all_rules()[code].rule], {}, preview=True)
    profile = cProfile.Profile()
    profile.enable()
    lint_source(source, "train.py", ruleset)
    profile.disable()
    return pstats.Stats(profile).total_calls


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("code", sorted(c for c in all_rules() if c != "TRL005"))
def test_rule_cost_grows_linearly(code: str, shape: str):
    make = SHAPES[shape]
    small, large = _calls(code, make(40)), _calls(code, make(80))
    # Twice the code, at most about twice the work (a constant start-up share makes it less).
    assert large <= 2.3 * small, f"{code} on {shape}: {small} calls at 40, {large} at 80"
