"""Every use the engine makes of LibCST's private names, in one place.

LibCST keeps these out of its public API, so a minor release may change them; pyproject.toml
bounds libcst below 2 and .ci/run tests the lowest declared version too. Each use is kept only
where no public API serves, and says in one line why (``Why:``) and what public API would
replace it (``Replace with:``). Nothing else in trllint (or in rules/) may import a ``libcst._*``
module or read a LibCST attribute whose name starts with an underscore.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType
from typing import Any, Mapping, MutableMapping

import libcst as cst
from libcst.metadata import MetadataWrapper, ProviderT
from libcst.metadata.base_provider import BaseMetadataProvider

__all__ = [
    "UNDEFINED_DEFAULT",
    "CodegenState",
    "WholeModuleProvider",
    "computed_metadata",
    "generate",
    "generate_code",
]

# The default of MetadataDependent.get_metadata, which raises KeyError for a missing node unless
# a default is given. Rule.get_metadata overrides it and must pass "no default" on unchanged.
# Not a private name: read from the public method's signature, so no private module is imported.
UNDEFINED_DEFAULT: Any = inspect.signature(cst.MetadataDependent.get_metadata).parameters["default"].default


def computed_metadata(wrapper: MetadataWrapper) -> MutableMapping[ProviderT, Mapping[cst.CSTNode, object]]:
    """The wrapper's own provider -> metadata cache (``wrapper._metadata``).

    Filled by ``resolve_many``; a provider computed directly (:func:`generate`) must be stored
    there so that a later ``resolve_many`` reuses it instead of computing it again.
    Why: the public ``resolve`` ends every round with a visit of the whole tree (about a parse).
    Replace with: a public ``MetadataWrapper.resolve`` that skips that visit when nothing
    batchable is left.
    """
    return wrapper._metadata


def generate(provider: ProviderT, wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, object]:
    """Compute one provider that needs no other metadata, without LibCST's batched visit
    (``provider()._gen``).
    Why: as :func:`computed_metadata`. Replace with: the public API named there."""
    return provider()._gen(wrapper)


class WholeModuleProvider(BaseMetadataProvider[Any]):
    """A metadata provider computed in one go from the module by :meth:`compute`.

    LibCST's ``_gen`` copies the provider's map into a plain dict, which costs a pass over every
    node and would drop a map's own laziness (trllint.core.cst.parents links whitespace only on
    demand): ``_gen`` and ``_gen_impl`` are overridden to hand the map over as it is, and
    ``_computed`` is where LibCST's ``get_metadata`` looks it up.
    Why: LibCST's public providers are visitors, which rebuild every node they pass.
    Replace with: a public hook for providers that return their own mapping.
    """

    def compute(self, module: cst.Module) -> Mapping[cst.CSTNode, Any]:
        raise NotImplementedError

    def _gen(self, wrapper: Any) -> Mapping[cst.CSTNode, Any]:
        self._computed = self.compute(wrapper.module)  # type: ignore[assignment]
        return MappingProxyType(self._computed)

    def _gen_impl(self, module: cst.Module) -> None:
        self._computed = self.compute(module)  # type: ignore[assignment]


# Code generation with hooks before and after each node: trllint.core.positions places a reported
# node by generating only the statement that holds it.
# Why: LibCST's position providers generate the whole module's code, once for each provider.
# Replace with: a public per-node code generation with positions.
from libcst._nodes.internal import CodegenState  # noqa: E402,F401


def generate_code(node: cst.CSTNode, state: CodegenState) -> None:
    """``node._codegen(state)``: render ``node`` into ``state``, calling its hooks.
    Why and Replace with: as ``CodegenState`` above."""
    node._codegen(state)
