"""Launch configuration files: what each says about the backend, read as text (no YAML library).

- an accelerate config (``accelerate config`` writes it; ``accelerate launch --config_file X``
  reads it): ``distributed_type`` (``NO``, ``MULTI_GPU``, ``FSDP``, ``DEEPSPEED``, ...),
  ``deepspeed_config.zero_stage`` or ``deepspeed_config_file``, ``num_processes``;
- a DeepSpeed JSON config: ``zero_optimization.stage`` (absent: stage 0);
- a training recipe (TRL's and the alignment handbook's YAML, passed as ``--config X``): the
  ``TrainingArguments`` keys ``deepspeed`` (a JSON config's path) and ``fsdp``.

The keys read here are flat and unambiguous, so a line reader is enough; a file that is none of
these says nothing.
"""

from __future__ import annotations

import json
import re

from dataclasses import dataclass
from trllint.facts.launch.backends import DEEPSPEED, MULTI_PROCESS, Backend, deepspeed_stage

_YAML_KEY = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_FALSE = ("", "null", "none", "~", "false", "''", '""', "[]")
# accelerate's DistributedType values that wrap with DDP (accelerate prepares a DDP module).
_DATA_PARALLEL_TYPES = ("MULTI_GPU", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU", "MULTI_MUSA", "MULTI_SDAA", "MULTI_HPU")


@dataclass(frozen=True)
class ConfigVerdict:
    """What one configuration file says: its backends, the line that says it, and in words.
    ``deepspeed_file``: a DeepSpeed JSON the file points to, whose stage decides (None: none)."""

    backends: frozenset[Backend]
    line: int
    message: str
    deepspeed_file: str | None = None


def yaml_keys(text: str) -> dict[str, tuple[str, int]]:
    """Every ``key: value`` line of a YAML file, by key (the first one wins): value without
    quotes or a trailing comment, and its 1-based line."""
    keys: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _YAML_KEY.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        value = match.group(2)
        if not value.startswith(("'", '"')):
            value = value.split(" #", 1)[0]
        keys.setdefault(match.group(1), (value.strip().strip("'\""), number))
    return keys


def read_yaml_config(text: str) -> ConfigVerdict | None:
    """An accelerate config or a training recipe; None when the YAML is neither."""
    keys = yaml_keys(text)
    if "distributed_type" in keys:
        return _accelerate_config(keys)
    return _recipe(keys)


def _accelerate_config(keys: dict[str, tuple[str, int]]) -> ConfigVerdict:
    kind, line = keys["distributed_type"]
    kind = kind.upper()
    processes = keys.get("num_processes", ("", 0))[0]
    if kind == "DEEPSPEED":
        if "deepspeed_config_file" in keys and keys["deepspeed_config_file"][0].lower() not in _FALSE:
            path = keys["deepspeed_config_file"][0]
            return ConfigVerdict(DEEPSPEED, line, f"accelerate config: DeepSpeed with {path}", deepspeed_file=path)
        stage = keys.get("zero_stage", ("", 0))[0]
        backends = deepspeed_stage(stage)
        said = f"ZeRO stage {stage}" if stage else "ZeRO stage not set"
        return ConfigVerdict(backends, keys.get("zero_stage", (kind, line))[1], f"accelerate config: distributed_type DEEPSPEED, {said}")
    if kind == "FSDP":
        return ConfigVerdict(frozenset({Backend.FSDP}), line, "accelerate config: distributed_type FSDP")
    if kind in _DATA_PARALLEL_TYPES:
        if processes.strip() == "1":
            return ConfigVerdict(frozenset({Backend.ONE_PROCESS}), line, f"accelerate config: {kind} with one process")
        return ConfigVerdict(frozenset({Backend.DDP}), line, f"accelerate config: distributed_type {kind} (DDP)")
    if kind == "NO":
        return ConfigVerdict(frozenset({Backend.ONE_PROCESS}), line, "accelerate config: distributed_type NO (one process)")
    # MEGATRON_LM, XLA and types this reader does not know: several processes, wrapper unknown.
    return ConfigVerdict(MULTI_PROCESS, line, f"accelerate config: distributed_type {kind}")


def _recipe(keys: dict[str, tuple[str, int]]) -> ConfigVerdict | None:
    deepspeed = keys.get("deepspeed")
    if deepspeed is not None and deepspeed[0].lower() not in _FALSE:
        return ConfigVerdict(DEEPSPEED, deepspeed[1], f"training recipe: deepspeed {deepspeed[0]}", deepspeed_file=deepspeed[0])
    fsdp = keys.get("fsdp")
    if fsdp is not None and fsdp[0].lower() not in _FALSE:
        return ConfigVerdict(frozenset({Backend.FSDP}), fsdp[1], f"training recipe: fsdp {fsdp[0]}")
    return None


def read_deepspeed_json(text: str) -> ConfigVerdict | None:
    """A DeepSpeed config's ZeRO stage; None when the JSON is not a DeepSpeed config."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not (
        "zero_optimization" in data or "train_micro_batch_size_per_gpu" in data or "train_batch_size" in data
    ):
        return None
    zero = data.get("zero_optimization")
    stage = zero.get("stage", 0) if isinstance(zero, dict) else 0
    line = next((n for n, text_line in enumerate(text.splitlines(), 1) if '"stage"' in text_line), 1)
    return ConfigVerdict(deepspeed_stage(stage), line, f"DeepSpeed config: ZeRO stage {stage}")
