"""Every use the engine makes of LibCST's private names, in one place.

LibCST keeps these out of its public API, so a minor release may change them; pyproject.toml
bounds libcst below 2 and .ci/run tests the lowest declared version too. Each use says why it is
needed and what public API would replace it. Nothing else in trllint (or in rules/) may import a
``libcst._*`` module or read a LibCST attribute whose name starts with an underscore.
"""

from __future__ import annotations

import opcode
from types import MappingProxyType
from typing import Any, Callable, Mapping, MutableMapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ProviderT
from libcst.metadata.base_provider import BaseMetadataProvider

__all__ = [
    "TOKEN_MODULES",
    "UNDEFINED_DEFAULT",
    "CodegenState",
    "WholeModuleProvider",
    "computed_metadata",
    "generate",
    "generate_code",
    "is_no_op",
    "visited_fields",
]

# The default of MetadataDependent.get_metadata, which raises KeyError for a missing node unless
# a default is given. Rule.get_metadata overrides it and must pass "no default" on unchanged.
# Replace with: a public sentinel, were LibCST to export one.
from libcst._metadata_dependent import _UNDEFINED_DEFAULT as UNDEFINED_DEFAULT  # noqa: F401

# The modules that hold LibCST's whitespace, comment and operator node classes: the walk skips
# those subtrees when no visitor hooks them. Replace with: a public list of token node types.
TOKEN_MODULES = ("libcst._nodes.whitespace", "libcst._nodes.op")


def computed_metadata(wrapper: MetadataWrapper) -> MutableMapping[ProviderT, Mapping[cst.CSTNode, object]]:
    """The wrapper's own provider -> metadata cache (``wrapper._metadata``).

    Filled by ``resolve_many``; a provider computed directly (:func:`generate`) must be stored
    there so that a later ``resolve_many`` reuses it instead of computing it again.
    Replace with: a public ``MetadataWrapper.resolve`` that skips the batched visit when nothing
    batchable is left (it ends every round with a whole-tree traversal today).
    """
    return wrapper._metadata


def generate(provider: ProviderT, wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, object]:
    """Compute one provider that needs no other metadata, without LibCST's batched visit
    (``provider()._gen``). Replace with: the public API above."""
    return provider()._gen(wrapper)


class WholeModuleProvider(BaseMetadataProvider[Any]):
    """A metadata provider computed in one go from the module by :meth:`compute`.

    LibCST's ``_gen`` copies the provider's map into a plain dict, which costs a pass over every
    node and would drop a map's own laziness (trllint.core.cst.parents links whitespace only on
    demand): ``_gen`` and ``_gen_impl`` are overridden to hand the map over as it is, and
    ``_computed`` is where LibCST's ``get_metadata`` looks it up.
    Replace with: a public hook for providers that return their own mapping.
    """

    def compute(self, module: cst.Module) -> Mapping[cst.CSTNode, Any]:
        raise NotImplementedError

    def _gen(self, wrapper: Any) -> Mapping[cst.CSTNode, Any]:
        self._computed = self.compute(wrapper.module)  # type: ignore[assignment]
        return MappingProxyType(self._computed)

    def _gen_impl(self, module: cst.Module) -> None:
        self._computed = self.compute(module)  # type: ignore[assignment]


def visited_fields(node_type: type) -> list[tuple[str, str]]:
    """(helper, field) for each ``visit_<helper>(self, "<field>", ...)`` call in
    ``node_type._visit_and_replace_children``, in order, read from its bytecode: the only place that
    says in which order LibCST visits a node's fields and how each holds its children (one,
    optional, a sequence). Reading the source instead (``inspect.getsource``) cost a tenth of a
    second per process, and ``dis`` a hundred microseconds per class (6 ms per process): the code
    units are read directly (CPython 3.11+: two bytes each, ``LOAD_GLOBAL``'s name at half its
    argument; tests/test_walk.py holds the result to the source of every class). Raises
    AttributeError/TypeError where there is no bytecode (a compiled LibCST); the walk then falls
    back to the dataclass fields.
    Replace with: a public per-class child-field list."""
    code = node_type._visit_and_replace_children.__code__  # type: ignore[attr-defined]
    units, names, constants = code.co_code, code.co_names, code.co_consts
    found: list[tuple[str, str]] = []
    helper = None
    extended = 0
    for at in range(0, len(units), 2):
        operation, argument = units[at], units[at + 1] | extended
        if operation == _EXTENDED_ARG:
            extended = argument << 8
            continue
        extended = 0
        if operation == _LOAD_GLOBAL and names[argument >> 1].startswith("visit_"):
            helper = names[argument >> 1][len("visit_") :]
        elif helper is not None and operation == _LOAD_CONST and isinstance(constants[argument], str):
            found.append((helper, constants[argument]))
            helper = None
    return found


_LOAD_GLOBAL, _LOAD_CONST, _EXTENDED_ARG = (opcode.opmap[name] for name in ("LOAD_GLOBAL", "LOAD_CONST", "EXTENDED_ARG"))


# Code generation with hooks before and after each node: trllint.core.positions places a reported node
# by generating only the statement that holds it (LibCST's position providers generate the whole
# module, for each provider). Replace with: a public per-node code generation with positions.
from libcst._nodes.internal import CodegenState  # noqa: E402,F401


def generate_code(node: cst.CSTNode, state: CodegenState) -> None:
    """``node._codegen(state)``: render ``node`` into ``state``, calling its hooks."""
    node._codegen(state)


def is_no_op(method: Callable[..., Any] | None) -> bool:
    """Whether a visitor method is one of LibCST's empty defaults (marked ``_is_no_op`` by its
    ``mark_no_op`` decorator, which its own batched visitor reads the same way): the walk need not
    call it. Replace with: a public marker."""
    return getattr(method, "_is_no_op", False)
