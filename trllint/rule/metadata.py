"""Computing the LibCST metadata rules declare, each provider once per file, and no more.

Positions cost two whole code generations (three times the parse) and are read only to report a
finding or build a fix, and most files that pass the prefilter never need parents: those
providers (``LAZY_METADATA``) are computed on a rule's first ``get_metadata``, once per file.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import libcst as cst
from libcst.metadata import (
    BatchableMetadataProvider,
    MetadataWrapper,
    PositionProvider,
    ProviderT,
    WhitespaceInclusivePositionProvider,
)

from trllint.core.cst.parents import ParentProvider
from trllint.core.cst.private import computed_metadata, generate

# Every rule declares the two position providers (Rule.METADATA_DEPENDENCIES).
POSITION_METADATA: tuple[ProviderT, ...] = (PositionProvider, WhitespaceInclusivePositionProvider)
LAZY_METADATA: frozenset[ProviderT] = frozenset({*POSITION_METADATA, ParentProvider})


def resolve_provider(wrapper: MetadataWrapper, provider: ProviderT) -> Mapping[cst.CSTNode, object]:
    """One provider's metadata for the wrapped module, computed once per wrapper.

    LibCST's resolver ends every round with a batched visit of the whole tree, even when no
    batchable provider is left to compute: a wasted traversal (about one parse) per call. A
    provider that needs no other metadata is computed directly instead.
    """
    computed = computed_metadata(wrapper)  # LibCST's own cache, shared with resolve_many
    if provider not in computed:
        if issubclass(provider, BatchableMetadataProvider) or provider.METADATA_DEPENDENCIES or provider.gen_cache:
            wrapper.resolve_many([provider])
        else:
            computed[provider] = generate(provider, wrapper)
    return computed[provider]


def rule_metadata_dependencies(rules: Iterable[type[cst.MetadataDependent]]) -> set[ProviderT]:
    """Every provider the rules declare (``METADATA_DEPENDENCIES``), positions always."""
    deps: set[ProviderT] = set(POSITION_METADATA)
    for rule in rules:
        deps.update(rule.METADATA_DEPENDENCIES)
    return deps
