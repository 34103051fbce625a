"""What another module of the project tells a linted file: named, versioned facts, each computed
only when a question asks it of a module.

A fact is declared where it lives, by the module that answers with it (a shared fact in
``trllint.facts``, a rule's own beside the rule)::

    FORWARDS_TO_DEEPSPEED = ModuleFact("trl003.forwards-to-deepspeed", 1, compute)

``compute(model)`` reads the module's own :class:`~trllint.semantic.model.SemanticModel` (the same
analyses the rules run on a linted file) and returns what the module says as a JSON-able dict
keyed by the names of its definitions (a function, a class, ``self.<method>``: the fact's choice).
A name the dict leaves out says nothing, and unknown is silent. The project index
(``trllint.semantic.project.index``) computes a fact for a module the first time a question asks
it, keeps it per module content in memory and, when the run has a cache folder, on disk under
``<key>@<version>``: a new fact, or a new version of one, is computed again on its own, and every
other fact cached for the module is still read.

A question may name the tokens a module must spell to hold its answer (TRL003's: a DeepSpeed
sink's call; TRL001's: a wrapping). A module that spells none answers ``{}`` from its text alone,
without a parse; one whose code calls none of a fact's ``calls`` answers ``{}`` from CPython's
parse, without LibCST's, and so does a definition whose slice the fact's ``says_nothing`` proves
silent.

The semantic layer knows no fact: the module that asks a fact is the one that declares it or
imports its declaration, so the fact is registered in every process (a forked or a spawned
worker) before it is asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from dataclasses import dataclass

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel
    from trllint.semantic.project.slices import ModuleSlice

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
    # What it says of a definition (under its name, or ``Class.<method>``) depends on nothing
    # else of the module than its top-level statements and the definitions it names: the index
    # may answer a question about one definition from a slice of the module
    # (trllint.semantic.project.slices) instead of parsing all of it.
    per_definition: bool = False
    # The last names a module's code must call (``deepspeed.initialize(...)``, ``ds.initialize``)
    # or import for the fact to say anything of it: the index asks CPython's parse of a module
    # whose text passed the asker's tokens before LibCST parses it (a word in a docstring or a
    # comment, or a definition of that name, passes the tokens and calls nothing). For a fact
    # ``per_definition``, what it says of a definition must come from the calls in that
    # definition's own lines: one whose lines spell none of them, in a module that imports none
    # (no call under another name), gets ``{}`` without a parse. Empty: no such test.
    calls: frozenset[str] = frozenset()
    # For a fact ``per_definition``: a proof, from a slice's words and CPython's parse of the
    # asked definitions, that the fact says nothing of them (True: ``{}`` without LibCST's parse
    # of the slice). It must never be True where the fact says something: the answer is cached
    # as the fact's. None: no such proof.
    says_nothing: Callable[[ModuleSlice], bool] | None = None

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
