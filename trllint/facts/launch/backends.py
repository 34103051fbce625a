"""The ways a training program can run, and one fact about how a program is run.

A backend is what wraps the model and shards its state: one process (nothing wrapped), DDP,
FSDP, or a DeepSpeed engine with ZeRO stage 0-2 (parameters whole on every rank) or stage 3
(parameters sharded). What is a bug depends on it: ``model.config`` fails through DDP and reads
DeepSpeed's own configuration through an engine; ``get_state_dict`` gathers shards (a
collective) only under ZeRO-3 and FSDP.
"""

from __future__ import annotations

import enum
import re

from trllint.core.findings import Evidence
from dataclasses import dataclass


class Backend(enum.Enum):
    ONE_PROCESS = "one process"
    DDP = "DDP"
    FSDP = "FSDP"
    ZERO_UNSHARDED = "DeepSpeed ZeRO stage 0-2"
    ZERO3 = "DeepSpeed ZeRO-3"


DEEPSPEED = frozenset({Backend.ZERO_UNSHARDED, Backend.ZERO3})
SHARDED = frozenset({Backend.ZERO3, Backend.FSDP})
MULTI_PROCESS = frozenset({Backend.DDP, Backend.FSDP, *DEEPSPEED})
ANY = frozenset({Backend.ONE_PROCESS, *MULTI_PROCESS})

# What code that tests the backend names, read by the code's own launch facts (code.py) and by
# the tests that settle the backend at a node (backend_tests.py): accelerate's DistributedType
# members, and the flags the Trainer and transformers set (true exactly under these backends).
DISTRIBUTED_TYPE_BACKENDS: dict[str, frozenset[Backend]] = {
    "DEEPSPEED": DEEPSPEED,
    "FSDP": frozenset({Backend.FSDP}),
    "MULTI_GPU": frozenset({Backend.DDP}),
}
BACKEND_FLAGS: dict[str, frozenset[Backend]] = {
    "is_deepspeed_enabled": DEEPSPEED,
    "is_deepspeed_zero3_enabled": frozenset({Backend.ZERO3}),
    "is_fsdp_enabled": frozenset({Backend.FSDP}),
}
# A program's own switch for a backend, named after it (`args.use_fsdp`, `config.fsdp_enable`,
# `self.is_deepspeed`, `args.deepspeed`, `use_deepspeed_optimizer`): set when the program runs
# under that backend, as a flag of the Trainer is. Not `deepspeed_available` (installed, not in use)
# nor `disable_fsdp`: only a flag that says the backend is on.
_FLAG_BACKENDS = {"deepspeed": DEEPSPEED, "fsdp": frozenset({Backend.FSDP})}
# The values a program's own engine switch gives a backend (`train_engine == "torch_ddp"`): the
# flags' names, and DDP's.
ENGINE_SWITCH_VALUES: dict[str, frozenset[Backend]] = {
    **_FLAG_BACKENDS,
    "ddp": frozenset({Backend.DDP}),
    "torch_ddp": frozenset({Backend.DDP}),
}
_FLAG_ON = re.compile(r"^(?:(?:use|is|using|enable|with)_)?(deepspeed|fsdp)(?:_(?:enable|enabled|on|optimizer))?$")


def backends_of_flag(name: str) -> frozenset[Backend]:
    """The backends a flag of that name (the last part of a dotted name) is true exactly under:
    ``BACKEND_FLAGS``, or a program's own switch named after a backend; empty for any other name."""
    if name in BACKEND_FLAGS:
        return BACKEND_FLAGS[name]
    match = _FLAG_ON.match(name)
    return _FLAG_BACKENDS[match.group(1)] if match else frozenset()


def deepspeed_stage(stage: object) -> frozenset[Backend]:
    """The backends a DeepSpeed ZeRO stage names (an unknown stage, ``"auto"``: either)."""
    if isinstance(stage, str) and stage.strip().isdigit():
        stage = int(stage.strip())
    if isinstance(stage, int) and not isinstance(stage, bool):
        return frozenset({Backend.ZERO3}) if stage >= 3 else frozenset({Backend.ZERO_UNSHARDED})
    return DEEPSPEED


def describe(backends: frozenset[Backend]) -> str:
    """``DeepSpeed ZeRO-3 or FSDP``: how a message names a set of backends, in a fixed order."""
    names = [b.value for b in Backend if b in backends]
    if set(DEEPSPEED) <= backends:
        # Both stages: "DeepSpeed", where the stages stand in the enum's order (last).
        names = [n for n in names if not n.startswith("DeepSpeed")] + ["DeepSpeed"]
    return " or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass(frozen=True)
class LaunchFact:
    """One thing the project says about how code runs: the backends it allows, and where.

    ``entry``: the program a launch command starts, as the command spells it relative to the
    project (``examples/train.py``); None for a fact that holds for the project (a configuration
    file no command names) or for the file it was read from (the code's own ``Accelerator(
    deepspeed_plugin=...)``). ``shows``: the backends it is evidence of, where that is less than
    ``backends`` says (None: ``backends``): another program's launch shows a script only that
    the project runs on several processes."""

    backends: frozenset[Backend]
    evidence: tuple[Evidence, ...]  # the command, then the configuration it names
    entry: str | None = None
    shows: frozenset[Backend] | None = None
