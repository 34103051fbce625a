"""Does a file run distributed? It imports accelerate, torch.distributed or DeepSpeed, wraps a
model in DistributedDataParallel (which needs a process group, wherever the file got it), or
subclasses a Trainer: the rules about collectives and gathers read no other file.
"""

from __future__ import annotations

import re

import libcst as cst

from trllint.core.cst.names import call_name
from trllint.core.prefilter import Token
from trllint.core.source import SourceFile
from trllint.semantic.context import is_trainer_class
from trllint.semantic.model import SemanticModel

# Text every file that runs_distributed() accepts contains: the imports it reads, the
# torch.distributed attribute path, or a Trainer base class. It lets the prefilter skip the rest.
DISTRIBUTED_MARKERS: tuple[Token, ...] = (
    "Trainer",
    "torch.distributed",
    "DistributedDataParallel",
    # `from deepspeed.x import y`; `import accelerate`, `import os, deepspeed` (lines may continue)
    re.compile(r"from[\s\\]+(?:accelerate|deepspeed)"),
    re.compile(r"import[ \t][^\n]*(?:\\\n[^\n]*)*?(?:accelerate|deepspeed)"),
    re.compile(r"import[\s\w,(\\]*distributed"),  # `from torch import (nn, distributed)`
)


_DDP = "torch.nn.parallel.DistributedDataParallel"


def runs_distributed(source: SourceFile) -> bool:
    """The file uses accelerate, torch.distributed, DeepSpeed or DistributedDataParallel, or
    subclasses a Trainer."""
    model = SemanticModel.of(source)
    return model.once((runs_distributed,), lambda: _runs_distributed(model))


def _runs_distributed(model: SemanticModel) -> bool:
    imports = model.imports
    return (
        imports.imports_any("accelerate", "torch.distributed", "deepspeed", _DDP)
        or "torch.distributed." in model.source.text
        or any(isinstance(s, cst.ClassDef) and is_trainer_class(s) for s in model.source.module.body)
        # `nn.parallel.DistributedDataParallel(model)` with `from torch import nn`.
        or any(imports.resolve(call_name(call)) == _DDP for call in model.calls)
    )
