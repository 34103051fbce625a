"""A project's modules, each known by its content: its outline, what its text spells, and its
facts.

The index is lazy: it outlines only the modules a linted file imports (and, for base classes and
re-exports, what those import), once per file content. An outline (``trllint.semantic.project.outline``,
CPython's parser) is enough to follow a name to the module that defines it; a fact about that
module (a :class:`~trllint.semantic.project.summaries.ModuleFact`) is computed on the module's own
LibCST tree and :class:`~trllint.semantic.model.SemanticModel`, as for a linted file, and only
when a question asks that fact of it and its text spells what the question needs. So the facts
for a file depend on the file and the modules it imports, never on which other paths were named
on the command line (pre-commit passes only the staged files), and a 2,000-module tree costs
nothing it does not use.

Facts are kept per content hash and fact (name and version) in memory and, when the run has a
cache folder, on disk (``trllint.semantic.project.fact_cache``): a warm run parses no imported
module, and a pre-commit run on one file reads only the facts of the modules it imports.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from trllint.semantic.project.buffers import read_module
from trllint.semantic.project.fact_cache import FactCache, read_and_digest
from trllint.semantic.project.resolution import ImportResolver

if TYPE_CHECKING:
    from trllint.core.prefilter import AllOf, AnyOf
    from trllint.core.source import SourceFile
    from trllint.semantic.project.outline import ImportRef, ModuleOutline
    from trllint.semantic.project.summaries import ModuleAnswer, ModuleFact

# What a module's outline is kept under in its cache file, beside its facts (``key@version``).
OUTLINE = "outline@3"
# A call of a method, as text: ``.name(`` (the name is the group).
_METHOD_CALL = re.compile(r"\.\s*([A-Za-z_]\w*)\s*\(")
# The bytes and texts of the modules last asked about that one index keeps: the questions about
# one module (its hash, its outline, its spellings) come together.
MAX_KEPT_TEXTS = 16
T = TypeVar("T")


class ProjectIndex:
    """One project's modules: where an import leads, and the facts about what is there."""

    def __init__(self, root: Path, cache_folder: Path | None = None, scope: Path | None = None) -> None:
        self.root = root
        self.scope = root if scope is None else scope
        self.imports = ImportResolver(root, self.scope)
        self._cache = FactCache(cache_folder)
        self._facts: dict[tuple[str, str], ModuleAnswer | None] = {}  # (content hash, key@version)
        self._unparsable: set[str] = set()  # content hashes LibCST cannot parse
        self._outlines: dict[str, ModuleOutline | None] = {}  # by content hash
        # (content hash, what was asked) -> what the module's text says
        self._spells: dict[tuple[str, Any], bool] = {}  # spells one of these tokens
        self._defines_only: dict[tuple[str, Any], bool] = {}  # names this only where it defines it
        self._hashes: dict[Path, str | None] = {}
        # The bytes and the text of the last modules hashed, by content hash: each question about a
        # module (its outline, its spellings, a name) would read and decode it again.
        self._bytes: dict[str, bytes] = {}
        self._texts: dict[str, str] = {}
        # The project's modules (``files.project_files``), listed once until one changes, and the
        # names each calls as a method (``x.name(``), by content hash.
        self._modules: list[Path] | None = None
        self._stamp: str | None = None  # modules_stamp, until a module changes
        self._methods_called: dict[str, frozenset[str]] = {}

    def resolve(self, importer: Path, ref: ImportRef) -> tuple[Path, str | None] | None:
        """The project file ``ref`` leads to, and the name to look up in it (None: the module
        itself). None when it leads outside the project or nowhere."""
        return self.imports.resolve(importer, ref)

    def modules_beside(self, path: Path) -> list[Path]:
        """The other modules in ``path``'s folder, in name order."""
        files, _ = self.imports.listing(path.parent)
        return [path.parent / name for name in sorted(files) if name.endswith(".py") and name != path.name]

    def forget(self, path: Path) -> None:
        """Read ``path`` afresh: it was edited, saved, created or deleted (an editor's server).
        What was computed from its old content stays, keyed by that content."""
        self._hashes.pop(path, None)
        self.imports.forget()  # a created or deleted module changes where imports lead
        self._modules, self._stamp = None, None

    def content_hash(self, path: Path) -> str | None:
        if path not in self._hashes:
            data, digest = read_and_digest(path)
            self._hashes[path] = digest
            if digest is not None and data is not None:
                _keep_recent(self._bytes, digest, data, MAX_KEPT_TEXTS)
        return self._hashes[path]

    def _data(self, path: Path, digest: str) -> bytes:
        """The module's bytes, as hashed (raises OSError when they must be read and cannot be)."""
        data = self._bytes.get(digest)
        return read_module(path) if data is None else data

    def _text(self, digest: str, data: bytes | None) -> str:
        """The module's text, decoded once while it is among the last modules asked about."""
        if data is None:
            return ""
        if digest not in self._texts:
            _keep_recent(self._texts, digest, data.decode("utf-8", errors="replace"), MAX_KEPT_TEXTS)
        return self._texts[digest]

    def outline(self, path: Path) -> ModuleOutline | None:
        """What the module imports and defines: from memory, the disk cache, or CPython's parse
        now (then kept in both); None when it cannot be read or parsed."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if digest not in self._outlines:
            from trllint.semantic.project.outline import ModuleOutline

            try:
                outline: ModuleOutline | None = ModuleOutline.from_json(self._cache.stored(digest)[OUTLINE])
            except (AttributeError, KeyError, TypeError, ValueError):
                outline = None  # not kept yet, or damaged: read again
            if outline is None:
                outline = self._outline_now(path, digest)
                if outline is not None:
                    self._cache.store(digest, OUTLINE, outline.to_json())
            self._outlines[digest] = outline
        return self._outlines[digest]

    def _outline_now(self, path: Path, digest: str) -> ModuleOutline | None:
        from trllint.core.source import SourceDecodeError, SourceFile
        from trllint.core.syntax import cpython_tree
        from trllint.semantic.project.outline import outline_of

        try:
            tree = cpython_tree(SourceFile.from_bytes(self._data(path, digest), str(path)))
        except (OSError, SourceDecodeError):
            return None
        return None if tree is None else outline_of(tree)

    def spells(self, path: Path, tokens: AnyOf | AllOf) -> bool:
        """The module's text holds ``tokens`` (one of each part's words; a token read from code,
        not text, holds). Without them, a question about them has the answer of a module that
        does nothing, and the module need not be parsed."""
        digest = self.content_hash(path) or ""
        return self._read(path, self._spells, tokens, False, lambda data: tokens.holds(self._text(digest, data), {}))

    def names_only_where_defined(self, path: Path, name: str) -> bool:
        """No import in the module can bind ``name`` (``outline.names_only_where_defined``, read
        from its text)."""
        from trllint.semantic.project.outline import names_only_where_defined

        digest = self.content_hash(path) or ""
        return self._read(
            path, self._defines_only, name, False, lambda data: names_only_where_defined(self._text(digest, data), name)
        )

    def modules_calling(self, methods: frozenset[str]) -> list[Path]:
        """The project's modules (within ``scope``) whose text spells a call of one of
        ``methods`` as a method (``x.set_model(``), in path order. Every module is read once per
        content for all such questions: an answer that reaches past imports, to the code that
        calls a class's method wherever it is."""
        found: list[Path] = []
        for path in self._project_modules():
            digest = self.content_hash(path)
            if digest is None:
                continue
            if digest not in self._methods_called:
                try:
                    text = self._text(digest, self._data(path, digest))
                except OSError:
                    text = ""
                self._methods_called[digest] = frozenset(_METHOD_CALL.findall(text))
            if self._methods_called[digest] & methods:
                found.append(path)
        return found

    def modules_stamp(self) -> str:
        """A digest of the project's modules: their paths, sizes and times of last writing (as
        the result cache trusts a module's stamp without reading it), taken once until one is
        written, created or deleted (``forget``)."""
        if self._stamp is not None:
            return self._stamp
        stamps = []
        for path in self._project_modules():
            try:
                st = path.stat()
            except OSError:
                continue  # gone: the listing below it says so
            stamps.append(f"{path} {st.st_size} {st.st_mtime_ns}")
        self._stamp = hashlib.sha256("\n".join(stamps).encode("utf-8")).hexdigest()[:16]
        return self._stamp

    def _project_modules(self) -> list[Path]:
        """The project's modules (within ``scope``), listed once until one changes (``forget``)."""
        from trllint.semantic.project.files import project_files

        if self._modules is None:
            self._modules = sorted(project_files(self.scope, (".py",)))
        return self._modules

    def _read(
        self,
        path: Path,
        answers: dict[tuple[str, Any], T],
        about: Any,
        unreadable: T,
        answer: Callable[[bytes | None], T],
    ) -> T:
        """``answer`` of the module's bytes (None: it cannot be read now), once per content and
        ``about``; ``unreadable`` for a module that has no content hash (it cannot be read)."""
        digest = self.content_hash(path)
        if digest is None:
            return unreadable
        key = (digest, about)
        if key not in answers:
            try:
                data: bytes | None = self._data(path, digest)
            except OSError:
                data = None
            answers[key] = answer(data)
        return answers[key]

    def fact(
        self,
        path: Path,
        fact: ModuleFact,
        deep_if: AnyOf | AllOf | None = None,
        parsed: dict[str, SourceFile] | None = None,
    ) -> ModuleAnswer | None:
        """What the module says for ``fact``: from memory, the disk cache, or one parse of it now;
        None when it cannot be read or parsed (then everything in it is unknown). When its text
        does not hold ``deep_if`` (spells none of its tokens; for an ``AllOf``, none of one
        part's), or spells none of the fact's ``calls``, ``{}``: it says nothing, and is not
        parsed. ``parsed``: the modules parsed so far for the asker, by content hash, kept there
        for its next fact (the asker releases them); without it the parse is released at once."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if (deep_if is not None and not self.spells(path, deep_if)) or (fact.calls and not self._spells_a_call(path, fact)):
            return None if self.outline(path) is None else {}
        key = (digest, fact.stored_as)
        if key not in self._facts or not self._still_current(self._facts[key], path):
            stored = self._cache.stored(digest)
            if fact.stored_as in stored and self._still_current(stored[fact.stored_as], path):
                self._facts[key] = stored[fact.stored_as]
            else:
                answer = self._compute(path, digest, fact, parsed)
                if answer is not None:
                    self._cache.store(digest, fact.stored_as, answer)
                self._facts[key] = answer
        return self._facts[key]

    def _still_current(self, answer: ModuleAnswer | None, path: Path) -> bool:
        """An answer that read other modules (``CONSULTED``) holds for the module at ``path`` while
        each of them holds what it held then. It lists its own module too: a copy of the module
        elsewhere, with the same text, may import other modules, and answers for itself."""
        from trllint.semantic.project.summaries import CONSULTED

        consulted = answer.get(CONSULTED) if answer is not None else None
        if not consulted:
            return True
        return str(path) in consulted and all((self.content_hash(Path(p)) or "") == digest for p, digest in consulted.items())

    def _spells_a_call(self, path: Path, fact: ModuleFact) -> bool:
        """The module's text spells one of the fact's ``calls``: a module that calls or imports
        one spells its name."""
        digest = self.content_hash(path) or ""
        return self._read(
            path, self._spells, fact.calls, False, lambda data: any(name in self._text(digest, data) for name in fact.calls)
        )

    def _compute(
        self, path: Path, digest: str, fact: ModuleFact, parsed: dict[str, SourceFile] | None
    ) -> ModuleAnswer | None:
        """``fact`` computed on the module's LibCST tree (parsed once for all the asker's facts
        when it keeps ``parsed``); None when the module cannot be parsed."""
        if digest in self._unparsable:
            return None
        import libcst as cst

        from trllint.core.source import SourceDecodeError
        from trllint.semantic.model import SemanticModel
        from trllint.semantic.project.summaries import CONSULTED, module_read_for_facts, modules_consulted_by_facts

        source = None if parsed is None else parsed.get(digest)
        if source is not None and module_read_for_facts(SemanticModel.of(source)) not in (None, path):
            source = None  # the same text at another path: its imports lead elsewhere, so parse it as itself
        if source is None:
            try:
                source = _parse(path, self._data(path, digest))
            except (OSError, SourceDecodeError, cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
                self._unparsable.add(digest)  # no other fact of it can be computed either
                return None
            if parsed is not None and digest not in parsed:
                parsed[digest] = source
        try:
            model = SemanticModel.of(source)
            model.once((module_read_for_facts,), lambda: path)
            answer = fact.compute(model)
            consulted = modules_consulted_by_facts(model)
            if consulted:
                read = {str(path): digest, **{str(other): hash for other, hash in consulted.items()}}
                answer = {**answer, CONSULTED: read}
            # Through JSON at once: a fact read back from the disk cache is the same value.
            computed: ModuleAnswer = json.loads(json.dumps(answer))
            return computed
        except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
            return None
        finally:
            if parsed is None or parsed.get(digest) is not source:
                source.release()


def _parse(path: Path, data: bytes) -> SourceFile:
    """The module parsed by LibCST, for a fact that must read it (raises when it cannot be)."""
    from trllint.core.source import SourceFile

    source = SourceFile.from_bytes(data, str(path))
    try:
        source.module
    except BaseException:
        source.release()
        raise
    return source


def _keep_recent(kept: dict[str, T], key: str, value: T, limit: int) -> None:
    """Keep ``value`` among the last ``limit`` kept there, dropping the oldest."""
    if key not in kept and len(kept) >= limit:
        kept.pop(next(iter(kept)))
    kept[key] = value


def modules_listing_digest(folder: Path) -> str:
    """A digest of the names of the modules in ``folder`` as it is now (not as an index listed
    it): a result that read the modules beside a file holds while no module is added or removed."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".py"))
    except OSError:
        names = []
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()
