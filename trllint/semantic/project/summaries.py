"""What another module of the project tells a linted file: named, versioned facts, each computed
only when a question asks it of a module.

A fact is declared where it lives, by the module that answers with it (a shared fact in
``trllint.facts``, a rule's own beside the rule)::

    FORWARDS_TO_DEEPSPEED = ModuleFact("trl003.forwards-to-deepspeed", 1, compute)

``compute(model)`` reads the module's own :class:`~trllint.semantic.model.SemanticModel` (the same
analyses the rules run on a linted file) and returns what the module says as a JSON-able dict
keyed by the names of its definitions (a function, a class, ``self.<method>``: the fact's choice).
A name the dict leaves out says nothing, and unknown is silent. The project index
(``trllint.semantic.project.modules``) computes a fact for a module the first time a question asks
it, keeps it per module content in memory and, when the run has a cache folder, on disk under
``<key>@<version>``: a new fact, or a new version of one, is computed again on its own, and every
other fact cached for the module is still read.

A question may name the tokens a module must spell to hold its answer (TRL003's: a DeepSpeed
sink's call; TRL001's: a wrapping), and a fact the names of the calls it reads (``calls``). A
module whose text spells none answers ``{}`` without a parse.

A fact reads its own module. It may also follow the module's imports to the classes they name
and ask those modules a fact that reads no other module (``imported_classes_view``): the modules
so read are listed in the answer (``CONSULTED``), and a stored answer is computed again once
one of them changes.

The semantic layer knows no fact: the module that asks a fact is the one that declares it or
imports its declaration, so the fact is registered in every process (a forked or a spawned
worker) before it is asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from dataclasses import dataclass

if TYPE_CHECKING:
    from pathlib import Path

    from trllint.semantic.model import SemanticModel

# The key, in a fact's answer, of the modules its computation read besides its own (path -> content
# hash); a name of a definition cannot hold its space.
CONSULTED = " consulted"


def module_read_for_facts(model: SemanticModel) -> Path | None:
    """The path of the module ``model`` is, when the project index read it for its facts (it
    sets the answer); None for a linted file, whose source knows its own path."""
    return model.cached((module_read_for_facts,))


def modules_consulted_by_facts(model: SemanticModel) -> dict[Path, str] | None:
    """The modules, besides its own, that the facts of a module read for its facts consulted
    (set by ``imported_classes_view``); None when none was asked."""
    return model.cached((modules_consulted_by_facts,))


# What a module says about its definitions, by name: JSON round-trips it for the cache.
ModuleAnswer = dict[str, Any]

_REGISTRY: dict[str, ModuleFact] = {}


@dataclass(frozen=True)
class ModuleFact:
    """One named fact about a module. ``version``: bumped whenever what ``compute`` returns
    changes in layout or meaning, so that answers cached by an older version are not read."""

    key: str
    version: int
    compute: Callable[[SemanticModel], ModuleAnswer]
    # The last names a module's code must call (``deepspeed.initialize(...)``, ``ds.initialize``)
    # or import for the fact to say anything of it: a module whose text spells none of them (a
    # call or an import spells the name) answers ``{}`` without a parse. Empty: no such test.
    calls: frozenset[str] = frozenset()
    # False for a fact computed from its own module alone, which a module read for its facts may
    # ask of the modules it imports (see ``CONSULTED``); a fact that may read others' cannot be.
    reads_other_modules: bool = True

    def __post_init__(self) -> None:
        known = _REGISTRY.get(self.key)
        if known is not None and _origin(known.compute) != _origin(self.compute):
            raise ValueError(f"two module facts are named {self.key!r}: {_origin(known.compute)} and {_origin(self.compute)}")
        _REGISTRY[self.key] = self  # the same declaration imported again (a reloaded module) replaces itself

    @property
    def stored_as(self) -> str:
        """The fact's name in a module's cache file."""
        return f"{self.key}@{self.version}"


def registered_facts() -> dict[str, ModuleFact]:
    """The facts declared by the modules imported so far, by key."""
    return dict(_REGISTRY)


def _origin(compute: Callable[..., Any]) -> str:
    return f"{getattr(compute, '__module__', '?')}.{getattr(compute, '__qualname__', repr(compute))}"


def top_level_classes(model: SemanticModel) -> list[Any]:
    """The module's classes at its top level: the ones another module can import or inherit."""
    import libcst as cst

    return [statement for statement in model.source.module.body if isinstance(statement, cst.ClassDef)]
