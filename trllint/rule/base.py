"""The contract between the engine and a rule.

A rule is a small declarative class, in the manner of Fixit: its code, name, message, fix
availability and the tokens it cannot match without are class attributes; the logic lives in a
few LibCST ``visit_*`` methods that call :meth:`Rule.report`. The engine runs every selected rule
over one parse of a file in one batched traversal. A check whose verdict needs the whole file
(every helper of the file summarised before any call is judged) is :meth:`Rule.check_module`,
called once per file after the traversal; a rule that declares only that hook takes no part in
the traversal. A rule that reads files other than Python (dependency lists, say) implements
:meth:`Rule.lint_text` instead of, or beside, its visitors.

Rules do no I/O, and nothing in the engine knows any single rule.

Preview, as in Ruff: what has not yet earned trust on code nobody tuned the rule to runs only
when the user turns preview on (``--preview``, ``preview = true``). A whole rule is preview by its
``status = "preview"``: it is then left out of every selection (the default, a prefix, ``ALL``)
unless preview is on.

Graduation is by finding kind. A rule declares its ``kinds`` (each: its findings resting on one
kind of evidence) and reports every finding with ``kind=``; the rule folder's generated
``graduation.toml`` lists the kinds that earned the default (``trllint.rule.graduation``). A rule
with a stable kind is stable, and its findings of the other kinds are preview; a kind that rests
on what the code does not show (an unknown launch) is declared ``unproven`` and never graduates. A
rule without kinds marks a preview finding itself: ``self.report(node, message, preview=True)``. Either way
the engine drops preview findings unless preview is on, before noqa comments and fixes, so a
preview finding's fix is never applied without preview either. The rule computes every finding;
it never asks whether preview is on.
"""

from __future__ import annotations

import fnmatch
import inspect
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Literal, Mapping, Sequence

import libcst as cst
from libcst.metadata import PositionProvider, ProviderT, WhitespaceInclusivePositionProvider

# Rules import the data types and the prefilter parts from here (``from trllint.rule.base import
# Edit, Fix, Rule, AnyOf``); each is defined in its own module.
from trllint.core.findings import Applicability, Edit, Evidence, Finding, Fix, Fixable, RuleStatus
from trllint.core.cst.private import UNDEFINED_DEFAULT, CodegenState, generate_code
from trllint.rule.metadata import LAZY_METADATA, POSITION_METADATA, resolve_provider
from trllint.core.prefilter import (
    AllOf, AnyOf, Calls, Defines, Prefilter, Reached, Reads, Token, check_declaration, token_present
)
from trllint.core.cst.parents import ParentProvider
from trllint.core.positions import positions_of
from trllint.core.source import SourceFile
# A rule's settings are data the configuration reads without importing LibCST or the rules.
from trllint.rule.declared import LINE_LENGTH_SETTING, FindingKind, Setting
from trllint.rule.graduation import stable_kinds

if TYPE_CHECKING:
    from trllint.semantic.model import SemanticModel

__all__ = [
    "AllOf", "AnyOf", "Applicability", "Calls", "Defines", "Edit", "Finding", "FindingKind", "Fix", "Fixable",
    "Prefilter", "Rule",
    "RuleStatus", "Reads", "Setting", "Reached", "Token", "token_present",
]



def project_reaches_of(source: Any) -> Callable[[Reached], bool] | None:
    """The answer to a prefilter's ``Reached`` token for ``source``'s project; None where there
    is no file (text from standard input with no name, a module read for its facts)."""
    if source is None or source.path is None:
        return None
    from trllint.semantic.model import SemanticModel
    from trllint.semantic.project.file_view import project_reaches

    model = SemanticModel.of(source)
    return lambda r: project_reaches(
        model, r.tokens, calls=r.calls, reading=r.reading, subclasses=r.subclasses, kept=r.kept
    )


class Rule(cst.BatchableCSTVisitor):
    """Base class of every rule. Subclasses set the class attributes below."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    fixable: ClassVar[Fixable] = "never"
    # The kinds of the rule's findings, by name (the module's docstring). A rule that declares
    # them has its status and preview_findings set from its graduation.toml.
    kinds: ClassVar[Mapping[str, FindingKind]] = {}
    # The declared kinds on by default (graduation.toml).
    stable_kinds: ClassVar[frozenset[str]] = frozenset()
    # "preview": not selected unless preview is on (the module's docstring; README: Rules).
    status: ClassVar[RuleStatus] = "stable"
    # A stable rule some of whose findings are preview says which, in a few words (--list-rules
    # and --explain show it).
    preview_findings: ClassVar[str] = ""
    # What a file must spell to be worth parsing for this rule: AnyOf(...) or AllOf(AnyOf(...), ...)
    # (trllint.core.prefilter). None: always run. The prefilter must never change results.
    prefilter: ClassVar[Prefilter | None] = None
    # File names (fnmatch patterns) this rule reads; Python rules keep the default.
    file_patterns: ClassVar[tuple[str, ...]] = ("*.py",)
    settings_schema: ClassVar[dict[str, Setting]] = {}
    # The name the file is linted as (its base name, or --stdin-filename's), set before lint_text
    # runs: a rule that reads several kinds of text file tells them apart by it.
    filename: str = ""
    # Set per class on the first visits_nodes().
    _visits_nodes: ClassVar[bool]

    # A rule that asks the shared context (trllint.semantic.context) adds its providers:
    # ``METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)``.
    METADATA_DEPENDENCIES: ClassVar[Sequence[Any]] = POSITION_METADATA
    # A dict, not LibCST's read-only Mapping: get_metadata adds the lazy providers on first use.
    metadata: dict[ProviderT, Mapping[cst.CSTNode, object]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_declaration(cls.__name__, cls.prefilter)
        if "kinds" in vars(cls) and cls.kinds:
            cls.stable_kinds = stable_kinds(Path(inspect.getfile(cls)).parent, getattr(cls, "code", cls.__name__), cls.kinds)
            cls.status = "stable" if cls.stable_kinds else "preview"
            # Stable: the kinds still preview. Preview: those that stay preview once it graduates.
            cls.preview_findings = "; ".join(
                kind.description
                for name, kind in cls.kinds.items()
                if (name not in cls.stable_kinds if cls.stable_kinds else kind.unproven)
            )
        if cls.status not in ("stable", "preview"):
            raise TypeError(f'{cls.__name__}.status is {cls.status!r}: "stable" or "preview"')
        if "prefilter_settings" in vars(cls):
            raise TypeError(
                f"{cls.__name__}.prefilter_settings is gone: name the setting in the AnyOf it extends, "
                'AnyOf(..., setting="my-setting") (docs/adding-a-rule.md, Prefilters)'
            )

    def __init__(self, source: SourceFile, settings: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.source = source
        self.settings = {key: s.default for key, s in self.settings_schema.items()}
        self.settings.update(settings or {})
        self.findings: list[Finding] = []
        self._wrapper: Any = None

    def release(self) -> None:
        """Drop the rule's state once the engine has taken its findings: it holds the tree, and
        bound methods of itself, so that only the collector could free it otherwise."""
        self.__dict__.clear()

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

    def get_metadata(self, key: Any, node: cst.CSTNode, default: Any = UNDEFINED_DEFAULT) -> Any:
        if key in POSITION_METADATA:
            return self._position(key, node, default)
        if key is ParentProvider and key not in self.metadata:
            self.metadata[key] = self._parents()
        if key in LAZY_METADATA and key not in self.metadata and self._wrapper is not None:
            self.metadata[key] = resolve_provider(self._wrapper, key)
        return super().get_metadata(key, node, default)

    def _position(self, key: Any, node: cst.CSTNode, default: Any) -> Any:
        # Placed per node, once per file for every rule (trllint.core.positions), never by LibCST's
        # providers, which generate the whole module's code for each of them.
        positions = positions_of(self.source, self._parents)
        try:
            if key is PositionProvider:
                return positions.syntactic(node)
            return positions.whitespace_inclusive(node)
        except KeyError:
            if default is UNDEFINED_DEFAULT:
                raise
            return default

    def _parents(self) -> Any:
        # One map per file, shared by every rule and the file's semantic model.
        return self.model.parents

    @property
    def model(self) -> SemanticModel:
        """The file's semantic model: one per file, shared by every rule (``check_module`` is
        handed the same one)."""
        from trllint.semantic.model import SemanticModel

        return SemanticModel.of(self.source)

    # ---- what the engine asks of a rule class -------------------------------------------

    @classmethod
    def reads_file(cls, filename: str) -> bool:
        return any(fnmatch.fnmatch(filename, pattern) for pattern in cls.file_patterns)

    @classmethod
    def visits_nodes(cls) -> bool:
        """Whether the rule declares a ``visit_*`` or ``leave_*`` method: only such a rule joins
        the file's traversal (a rule of ``check_module`` or ``lint_text`` alone needs none)."""
        found = cls.__dict__.get("_visits_nodes")
        if found is None:
            found = any(
                name.startswith(("visit_", "leave_")) and callable(value)
                for klass in cls.__mro__
                # LibCST's visitor bases stub every visit_X / leave_X; only code on top adds one.
                if not klass.__module__.startswith("libcst")
                for name, value in vars(klass).items()
            )
            cls._visits_nodes = found
        return found

    @classmethod
    def checks_module(cls) -> bool:
        """Whether the rule declares :meth:`check_module`."""
        return cls.check_module is not Rule.check_module

    @classmethod
    def may_match(cls, text: str, settings: dict[str, Any] | None = None, source: Any = None) -> bool:
        """``source``: the file, for a prefilter's ``Reached`` token (without it, one never holds)."""
        if cls.prefilter is None:
            return True
        return cls.prefilter.holds(text, settings or {}, project_reaches_of(source))

    @classmethod
    def prefilter_verdict(cls, text: str, settings: dict[str, Any] | None = None, source: Any = None) -> bool | None:
        """What the prefilter's cheap tokens say (``AllOf.verdict``): None where only the costly
        ``Reached`` could decide, which ``may_match`` then asks."""
        if cls.prefilter is None:
            return True
        return cls.prefilter.verdict(text, settings or {})

    def lint_text(self) -> None:
        """Check a file that is not Python source (override in rules that read such files)."""

    def check_module(self, model: SemanticModel) -> None:
        """Check the whole file at once, asking its semantic model: called once per Python file,
        after every rule's ``visit_*`` / ``leave_*`` methods (override in rules whose verdict
        needs the whole file). ``self.report`` and the fix helpers work here as in a visit."""

    # ---- what a rule calls -----------------------------------------------------------

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        *,
        fix: Fix | None = None,
        evidence: tuple[Evidence, ...] = (),
        preview: bool = False,
        kind: str | None = None,
    ) -> None:
        """Report ``node``. ``evidence``: the facts that made the finding (the wrap, the launch
        config, the rank test); ``kind``: which of the rule's ``kinds`` it is (required of a rule
        that declares kinds, and then its only way to be preview); ``preview=True``: a preview
        finding of a rule without kinds (the module's docstring)."""
        position = self.get_metadata(PositionProvider, node)
        self.report_at(
            position.start.line,
            position.start.column,
            position.end.line,
            position.end.column,
            message,
            fix=fix,
            evidence=evidence,
            preview=preview,
            kind=kind,
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
        evidence: tuple[Evidence, ...] = (),
        preview: bool = False,
        kind: str | None = None,
    ) -> None:
        """Report at 1-based lines and 0-based columns (LibCST's convention); ``preview`` and
        ``kind`` as in :meth:`report`."""
        if self.kinds:
            if kind not in self.kinds or preview:
                raise ValueError(f"{self.code} reported kind {kind!r} (preview={preview}); its kinds: {', '.join(self.kinds)}")
            preview = kind not in self.stable_kinds
        elif kind is not None:
            raise ValueError(f"{self.code} reported kind {kind!r} but declares no kinds")
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
                evidence=evidence,
                preview=preview,
                kind=kind or "",
            )
        )

    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> Edit:
        """An edit that swaps ``old`` for ``new``, rendered with the module's whitespace settings."""
        start, end = self.span_of(old)
        return Edit(start, end, self.source.module.code_for_node(new))

    def replace_statement(self, old: cst.BaseStatement, new: cst.BaseStatement) -> Edit:
        """An edit that swaps statement ``old`` for ``new``, rendered at ``old``'s indentation.

        Only ``new`` is rendered (never the whole module), so a rule that fixes many statements
        of a file pays for each statement once."""
        module = self.source.module
        parents = self._parents()
        indents: list[str] = []
        parent = parents.get(old)
        while parent is not None:
            if isinstance(parent, cst.IndentedBlock):
                indents.append(module.default_indent if parent.indent is None else parent.indent)
            parent = parents.get(parent)
        indents.reverse()
        state = CodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, indent_tokens=indents
        )
        generate_code(new, state)
        start, end = self.span_of(old)
        return Edit(start, end, "".join(state.tokens))

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
    def fix(*edits: Edit, unsafe: bool = False, reason: str | None = None) -> Fix:
        """A fix of these edits; ``reason`` (why it may fail or change a number) makes it unsafe.

        The reason is the text of a member of the rule's own ``ReasonKind`` enum
        (``Unsafe.DROPS_A_BOUND.text()``, ``Unsafe.RETURNS_NONE.text(model=name)``), so that no
        logic compares sentences; the fix keeps only the text, which reports show as it is."""
        return Fix(tuple(edits), "unsafe" if unsafe or reason else "safe", reason)
