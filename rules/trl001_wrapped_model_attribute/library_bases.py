"""Trainers of libraries that hand the model to ``accelerator.prepare`` in their ``__init__``.

TRL's ``PPOTrainer`` (the early one on its own base class, and the one rebuilt on transformers'
``Trainer``, later under ``trl.experimental``) and ``PPOv2Trainer`` all run
``self.model, ... = accelerator.prepare(self.model, ...)`` in ``__init__``: a subclass's
``self.model`` is the prepared model after the base's ``__init__``, wrapped in DDP on several
processes or in a DeepSpeed engine. The early ``PPOTrainer`` also calls
``self.batched_forward_pass(self.model, ...)``, so an override's model argument is that model.
Transformers' ``Trainer`` keeps ``self.model`` bare (its wrapped model is ``model_wrapped``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from trllint.core.cst.names import ImportMap, dotted_name, last_attribute
from trllint.facts.wrapping import ACCELERATE, Wrapping

_LIBRARY = "trl"
# The trainer class -> (the attributes its __init__ prepares, the methods it calls with that model).
_PREPARED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "PPOTrainer": (("self.model",), ("batched_forward_pass",)),
    "PPOv2Trainer": (("self.model",), ()),
}

# What a file that subclasses one of them spells (a prefilter token).
LIBRARY_TRAINER_NAMES = re.compile(r"PPO(?:v2)?Trainer(?!\w)")


@dataclass(frozen=True)
class LibraryBase:
    """What a class inherits from a library trainer that prepares its model."""

    name: str  # the base as the file spells it
    attributes: dict[str, Wrapping]
    model_methods: tuple[str, ...]


def library_base(cls: cst.ClassDef, imports: ImportMap) -> LibraryBase | None:
    """The first base of ``cls`` that is one of the library's preparing trainers, or None."""
    for base in cls.bases:
        spelled = dotted_name(base.value)
        full = imports.resolve(spelled)
        if spelled is None or full is None or full.split(".", 1)[0] != _LIBRARY:
            continue
        entry = _PREPARED.get(last_attribute(full) or "")
        if entry is None:
            continue
        attributes, methods = entry
        origin = f"accelerator.prepare(...) in {spelled}.__init__"
        wrapping = Wrapping(ACCELERATE, origin, accelerator="self.accelerator", library_base=True)
        return LibraryBase(spelled, {a: wrapping for a in attributes}, methods)
    return None
