"""The contract between the engine and a rule.

A rule is a small declarative class, in the manner of Fixit: its code, name, message, fix
availability and the tokens it cannot match without are class attributes; the logic lives in a
few LibCST ``visit_*`` methods that call :meth:`Rule.report`. The engine runs every selected rule
over one parse of a file in one batched traversal. A rule that reads files other than Python
(dependency lists, say) implements :meth:`Rule.lint_text` instead of, or beside, its visitors.

Rules do no I/O, and nothing in the engine knows any single rule.
"""

from __future__ import annotations

import fnmatch
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterator, Literal, Sequence, Union

import libcst as cst
from libcst._metadata_dependent import _UNDEFINED_DEFAULT
from libcst.metadata import (
    BatchableMetadataProvider,
    MetadataWrapper,
    PositionProvider,
    WhitespaceInclusivePositionProvider,
)

from trllint.analysis.parents import ParentProvider, parent_map
from trllint.positions import positions_of
from trllint.source import SourceFile

Applicability = Literal["safe", "unsafe"]
Token = Union[str, "re.Pattern[str]"]
Prefilter = Union[tuple[Token, ...], tuple[tuple[Token, ...], ...]]


def prefilter_groups(prefilter: Prefilter) -> tuple[tuple[Token, ...], ...]:
    """The prefilter as a conjunction of any-of groups (a flat tuple is one group)."""
    if not prefilter:
        return ()
    if isinstance(prefilter[0], tuple):
        return prefilter  # type: ignore[return-value]
    return (prefilter,)  # type: ignore[return-value]


def token_present(token: Token, text: str) -> bool:
    return token in text if isinstance(token, str) else token.search(text) is not None


Fixable = Literal["never", "sometimes", "always"]


@dataclass(frozen=True)
class Edit:
    """Replace ``source.text[start:end]`` with ``content`` (offsets in characters)."""

    start: int
    end: int
    content: str
    # 1-based (line, column) of start and end, filled in when the finding is reported.
    start_position: tuple[int, int] = (0, 0)
    end_position: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"

    @property
    def span(self) -> tuple[int, int]:
        return min(e.start for e in self.edits), max(e.end for e in self.edits)

    def located(self, source: SourceFile) -> Fix:
        def at(offset: int) -> tuple[int, int]:
            line, column = source.position(offset)
            return line, column + 1

        edits = tuple(replace(e, start_position=at(e.start), end_position=at(e.end)) for e in self.edits)
        return Fix(edits, self.applicability)


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    fix: Fix | None = None
    # Set on findings that the engine, not a rule, raises (TRL000, TRL999).
    internal: bool = field(default=False, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)


@dataclass(frozen=True)
class Setting:
    """A rule setting read from ``[tool.trllint]``; ``kind`` is the Python type of its value."""

    kind: type
    default: Any
    help: str = ""
    item_kind: type | None = None  # for lists: the type of each element


class Rule(cst.BatchableCSTVisitor):
    """Base class of every rule. Subclasses set the class attributes below."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    fixable: ClassVar[Fixable] = "never"
    # A file that contains none of these strings cannot hold a finding: it is not parsed for this
    # rule. Empty means "always run". The prefilter must never change results.
    # A token is a string or a compiled regular expression. A tuple of tuples is a conjunction:
    # each group must have a token present (``(("config", "generate"), WRAPPING_MARKERS)``).
    # Every file is checked, so prefer strings; a regex should start with a literal, not ``\b``
    # (trllint.analysis.markers says why).
    prefilter: ClassVar[Prefilter] = ()
    # Settings that name more things the rule looks for (a project's own sink, say): each value
    # (its last dotted part) joins the prefilter groups listed by index, so a file that spells
    # only a configured name is still parsed.
    prefilter_settings: ClassVar[dict[str, tuple[int, ...]]] = {}
    # File names (fnmatch patterns) this rule reads; Python rules keep the default.
    file_patterns: ClassVar[tuple[str, ...]] = ("*.py",)
    settings_schema: ClassVar[dict[str, Setting]] = {}
    # The name the file is linted as (its base name, or --stdin-filename's), set before lint_text
    # runs: a rule that reads several kinds of text file tells them apart by it.
    filename: str = ""

    METADATA_DEPENDENCIES: ClassVar[Sequence[Any]] = (PositionProvider, WhitespaceInclusivePositionProvider)

    def __init__(self, source: SourceFile, settings: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.source = source
        self.settings = {key: s.default for key, s in self.settings_schema.items()}
        self.settings.update(settings or {})
        self.findings: list[Finding] = []
        self._wrapper: Any = None

    # ---- metadata: positions only for the files that need them ------------------------

    @contextmanager
    def resolve(self, wrapper: Any) -> Iterator[None]:
        # Parents are computed on first use (get_metadata), once per file; positions are placed
        # per node (_position).
        self._wrapper = wrapper
        self.metadata = {
            key: resolve_provider(wrapper, key)
            for key in self.get_inherited_dependencies()
            if key not in LAZY_METADATA
        }
        try:
            yield
        finally:
            self.metadata = {}
            self._wrapper = None

    def get_metadata(self, key: Any, node: cst.CSTNode, default: Any = _UNDEFINED_DEFAULT) -> Any:
        if key in POSITION_PROVIDERS:
            return self._position(key, node, default)
        if key in LAZY_METADATA and key not in self.metadata and self._wrapper is not None:
            self.metadata[key] = resolve_provider(self._wrapper, key)
        return super().get_metadata(key, node, default)

    def _position(self, key: Any, node: cst.CSTNode, default: Any) -> Any:
        # Placed per node, once per file for every rule (trllint.positions), never by LibCST's
        # providers, which generate the whole module's code for each of them.
        positions = positions_of(self.source, self._parents)
        try:
            if key is PositionProvider:
                return positions.syntactic(node)
            return positions.whitespace_inclusive(node)
        except KeyError:
            if default is _UNDEFINED_DEFAULT:
                raise
            return default

    def _parents(self) -> Any:
        if self._wrapper is not None:
            return resolve_provider(self._wrapper, ParentProvider)  # shared with the rules asking
        return parent_map(self.source.module)

    # ---- what the engine asks of a rule class -------------------------------------------

    @classmethod
    def reads_file(cls, filename: str) -> bool:
        return any(fnmatch.fnmatch(filename, pattern) for pattern in cls.file_patterns)

    @classmethod
    def prefilter_for(cls, settings: dict[str, Any]) -> tuple[tuple[Token, ...], ...]:
        """The prefilter groups under these settings, configured names added (prefilter_settings)."""
        groups = list(prefilter_groups(cls.prefilter))
        for key, indexes in cls.prefilter_settings.items():
            names = tuple(str(value).rsplit(".", 1)[-1] for value in settings.get(key, ()))
            for index in indexes:
                groups[index] += names
        return tuple(groups)

    @classmethod
    def may_match(cls, text: str, settings: dict[str, Any] | None = None) -> bool:
        groups = cls.prefilter_for(settings or {})
        return all(any(token_present(token, text) for token in group) for group in groups)

    def lint_text(self) -> None:
        """Check a file that is not Python source (override in rules that read such files)."""

    # ---- what a rule calls -----------------------------------------------------------

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        *,
        fix: Fix | None = None,
    ) -> None:
        position = self.get_metadata(PositionProvider, node)
        self.report_at(
            position.start.line,
            position.start.column,
            position.end.line,
            position.end.column,
            message,
            fix=fix,
        )

    def report_at(
        self,
        line: int,
        column: int,
        end_line: int,
        end_column: int,
        message: str | None = None,
        *,
        fix: Fix | None = None,
    ) -> None:
        """Report at 1-based lines and 0-based columns (LibCST's convention)."""
        self.findings.append(
            Finding(
                code=self.code,
                name=self.name,
                message=message or self.message,
                path=self.source.display_path,
                line=line,
                column=column + 1,
                end_line=end_line,
                end_column=end_column + 1,
                fix=fix.located(self.source) if fix is not None else None,
            )
        )

    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> Edit:
        """An edit that swaps ``old`` for ``new``, rendered with the module's whitespace settings."""
        start, end = self.span_of(old)
        return Edit(start, end, self.source.module.code_for_node(new))

    def insert_before(self, node: cst.CSTNode, text: str) -> Edit:
        start, _ = self.span_of(node)
        return Edit(start, start, text)

    def span_of(self, node: cst.CSTNode) -> tuple[int, int]:
        """Character offsets of everything ``node`` renders, its own whitespace included."""
        position = self.get_metadata(WhitespaceInclusivePositionProvider, node)
        return (
            self.source.offset(position.start.line, position.start.column),
            self.source.offset(position.end.line, position.end.column),
        )

    @staticmethod
    def fix(*edits: Edit, unsafe: bool = False) -> Fix:
        return Fix(tuple(edits), "unsafe" if unsafe else "safe")


# Declared by every rule, computed on a rule's first get_metadata (see Rule.resolve), once per
# file: most files that pass the prefilter never need positions (no finding) or parents (the
# rule bails out early).
LAZY_METADATA = frozenset({PositionProvider, WhitespaceInclusivePositionProvider, ParentProvider})
POSITION_PROVIDERS = frozenset({PositionProvider, WhitespaceInclusivePositionProvider})


def resolve_provider(wrapper: MetadataWrapper, provider: Any) -> Any:
    """One provider's metadata for the wrapped module, computed once per wrapper.

    LibCST's resolver ends every round with a batched visit of the whole tree, even when no
    batchable provider is left to compute: a wasted traversal (about one parse) per call. A
    provider that needs no other metadata is computed directly instead.
    """
    computed = wrapper._metadata  # LibCST's own cache, shared with resolve_many
    if provider not in computed:
        if issubclass(provider, BatchableMetadataProvider) or provider.METADATA_DEPENDENCIES or provider.gen_cache:
            wrapper.resolve_many([provider])
        else:
            computed[provider] = provider()._gen(wrapper)
    return computed[provider]


def rule_metadata_dependencies(rules: Sequence[type[Rule]]) -> set[Any]:
    deps: set[Any] = {PositionProvider, WhitespaceInclusivePositionProvider}
    for rule in rules:
        deps.update(rule.METADATA_DEPENDENCIES)
    return deps
