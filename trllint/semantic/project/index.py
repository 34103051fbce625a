"""The project a file belongs to, and the modules of it that the file imports.

The project root is the folder of the nearest ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or
``.git`` above the file (else the file's own folder). An import is resolved to a file inside that
tree the way Python would find it when the project runs: relative imports from the importing
package; absolute ones from the script's folder (``sys.path[0]``), the folder above the file's
top package, the root and ``root/src``. A module outside the tree (installed trl, transformers,
accelerate) or one that does not exist is unknown, and unknown never makes a finding by itself.

The index is lazy: it outlines only the modules a linted file imports (and, for base classes and
re-exports, what those import), once per file content. An outline (``trllint.semantic.project.outline``,
CPython's parser) is enough to follow a name to the module that defines it (a :class:`Definition`);
a fact about that module (a :class:`~trllint.semantic.project.summaries.ModuleFact`) costs a LibCST
parse only when a question asks that fact of it, and its text spells what the question needs; a
fact declared ``per_definition`` is answered for a definition whose slice of the module
(``trllint.semantic.project.slices``) is under half of it from that slice alone. So
the facts for a file depend on the file and the modules it imports, never on which other paths
were named on the command line (pre-commit passes only the staged files), and a 2,000-module tree
costs nothing it does not use.

Facts are kept per content hash and fact (name and version) in memory and, when the run has a
cache folder, on disk: a warm run parses no imported module, and a pre-commit run on one file
reads only the facts of the modules it imports.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar


if TYPE_CHECKING:
    import ast

    from trllint.core.code_names import CodeNames
    import libcst as cst

    from trllint.semantic.project.outline import ClassOutline, ImportRef, ModuleOutline
    from trllint.semantic.project.slices import ModuleCutter

    from trllint.core.prefilter import AllOf, AnyOf
    from trllint.semantic.project.summaries import ModuleAnswer, ModuleFact
    from trllint.core.source import SourceFile
    from trllint.semantic.model import SemanticModel

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# Folders that hold installed packages, each its own project.
_INSTALLED_PACKAGES = ("site-packages", "dist-packages")
# A module bigger than this is not read (it is unknown): the bound on what one import costs.
MAX_MODULE_BYTES = 2_000_000
# Bumped whenever the layout of a module's cache file changes (a fact's own changes bump its version).
FACTS_FILE_FORMAT = 1
# How many base classes (across modules) one class's chain may follow: cycles and runaway chains end.
MAX_BASE_DEPTH = 16
# How many modules' cutters (their lines and words, for slices) one index keeps at a time.
MAX_CUTTERS = 64
# CPython trees the index keeps at once (``_tree``): the questions about one module come together.
MAX_TREES = 8
T = TypeVar("T")


def project_root(path: Path) -> Path:
    """The folder of the nearest project marker above ``path``; else (an installed or unpacked
    package) the folder that holds its top package, where Python would find it."""
    return _project_of_folder(path.resolve().parent)[0]


def project_scope(path: Path) -> Path:
    """The folder that holds the project's own files: its root, or for an installed package the
    package's folder (site-packages holds many projects)."""
    return _project_of_folder(path.resolve().parent)[1]


@lru_cache(maxsize=4096)
def _project_of_folder(folder: Path) -> tuple[Path, Path]:
    """(root, scope): where imports are searched from, and the folder a module must lie in.

    A project with a marker is its whole tree. Without one (site-packages, an unpacked wheel) the
    root holds many packages that are not one project: only the file's own top package is, so
    trl's summaries never read the installed transformers beside it."""
    # Asked for every file of a run and every module it imports: the answer is per folder.
    for candidate in (folder, *folder.parents):
        if candidate.name in _INSTALLED_PACKAGES and candidate != folder:
            # Installed (a virtual environment inside a project is no part of it): the package
            # the file belongs to, below site-packages, is its own project.
            package = folder
            while package.parent != candidate:
                package = package.parent
            return candidate, package
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate, candidate
    package = folder
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        package, folder = folder, folder.parent
    return folder, package


def module_digest(path: Path) -> str | None:
    """What a module's facts are kept under: the SHA-256 of its bytes; None when it cannot be read
    or is too big to be read at all."""
    return _read_and_digest(path)[1]


def _read_and_digest(path: Path) -> tuple[bytes | None, str | None]:
    try:
        data = read_module(path)  # an editor's unsaved buffer, when the server has one
    except OSError:
        return None, None
    return data, None if len(data) > MAX_MODULE_BYTES else hashlib.sha256(data).hexdigest()


class ProjectIndex:
    """One project's modules: where an import leads, and the facts about what is there."""

    def __init__(self, root: Path, cache_folder: Path | None = None, scope: Path | None = None) -> None:
        self.root = root
        self.scope = root if scope is None else scope
        self._cache_folder = cache_folder
        self._facts: dict[tuple[str, str], ModuleAnswer | None] = {}  # (content hash, key@version)
        self._disk: dict[str, dict[str, ModuleAnswer]] = {}  # content hash -> its cache file's facts
        self._unparsable: set[str] = set()  # content hashes LibCST cannot parse
        self._outlines: dict[str, ModuleOutline | None] = {}  # by content hash
        # (content hash, what was asked) -> what the module's text or CPython's parse says
        self._spells: dict[tuple[str, Any], bool] = {}  # spells one of these tokens
        self._defines_only: dict[tuple[str, Any], bool] = {}  # names this only where it defines it
        # calls or imports one of these last names, and the names its imports bind them under
        self._calls: dict[tuple[str, Any], tuple[bool, frozenset[str] | None]] = {}
        self._hashes: dict[Path, str | None] = {}
        self._resolved: dict[tuple[Path, ImportRef], tuple[Path, str | None] | None] = {}
        self._bases_of_folder: dict[Path, list[Path]] = {}
        self._module_files: dict[tuple[Path, tuple[str, ...]], Path | None] = {}
        # folder -> the names of its files and of its folders: an import's candidates are looked
        # up in its folder's listing, one read of the folder rather than a stat per candidate
        self._listings: dict[Path, tuple[frozenset[str], frozenset[str]]] = {}
        self._cutters: dict[str, ModuleCutter | None] = {}  # by content hash
        # CPython's trees of the last modules asked about: a module's outline, its calls and its
        # code tokens are asked one after another, and each would parse it.
        self._trees: dict[str, ast.Module | None] = {}
        # The bytes and the text of the last modules hashed, by content hash: each question about a
        # module (its spellings, a name, its calls, its statements) would read and decode it again.
        self._bytes: dict[str, bytes] = {}
        self._texts: dict[str, str] = {}

    # ---- resolving imports ----------------------------------------------------------------

    def resolve(self, importer: Path, ref: ImportRef) -> tuple[Path, str | None] | None:
        """The project file ``ref`` leads to, and the name to look up in it (None: the module
        itself). None when it leads outside the project or nowhere."""
        key = (importer, ref)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(importer, ref)
        return self._resolved[key]

    def _resolve(self, importer: Path, ref: ImportRef) -> tuple[Path, str | None] | None:
        parts = [p for p in ref.module.split(".") if p]
        if ref.level:
            base = importer.parent
            for _ in range(ref.level - 1):
                base = base.parent
            bases = [base] if self._inside(base) else []
        else:
            bases = self._search_bases(importer)
        for base in bases:
            if ref.name is not None:
                # `from pkg import helpers`: a submodule first, else a name defined in pkg.
                module = self._module_file(base, [*parts, ref.name])
                if module is not None:
                    return module, None
            module = self._module_file(base, parts) if parts else self._package_init(base)
            if module is not None:
                return module, ref.name
        return None

    def _search_bases(self, importer: Path) -> list[Path]:
        # Every file of a folder searches the same folders: found once per folder.
        if importer.parent not in self._bases_of_folder:
            self._bases_of_folder[importer.parent] = self._folders_searched(importer)
        return self._bases_of_folder[importer.parent]

    def _folders_searched(self, importer: Path) -> list[Path]:
        bases = [importer.parent]
        top = importer.parent
        while (top / "__init__.py").exists() and top != self.root and self.root in top.parents:
            top = top.parent
        bases += [top, self.root, self.root / "src"]
        unique: list[Path] = []
        for base in bases:
            if base not in unique and (base == self.root or self.root in base.parents):
                unique.append(base)
        return unique

    def _inside(self, path: Path) -> bool:
        return path == self.scope or self.scope in path.parents

    def _module_file(self, base: Path, parts: list[str]) -> Path | None:
        if not parts:
            return None
        # The files of a run import the same modules: each candidate is looked for once.
        key = (base, tuple(parts))
        if key not in self._module_files:
            self._module_files[key] = self._find_module_file(base, parts)
        return self._module_files[key]

    def _find_module_file(self, base: Path, parts: list[str]) -> Path | None:
        folder = base
        for part in parts[:-1]:
            if part not in self._listing(folder)[1]:
                return None
            folder = folder / part
        files, folders = self._listing(folder)
        if parts[-1] + ".py" in files:
            candidate = folder / (parts[-1] + ".py")
        elif parts[-1] in folders:
            return self._package_init(folder / parts[-1])
        else:
            return None
        return candidate if self._inside(candidate) else None

    def _package_init(self, base: Path) -> Path | None:
        candidate = base / "__init__.py"
        return candidate if "__init__.py" in self._listing(base)[0] and self._inside(candidate) else None

    def _listing(self, folder: Path) -> tuple[frozenset[str], frozenset[str]]:
        """The names of the files and of the folders in ``folder`` (links followed); none when it
        cannot be read."""
        if folder not in self._listings:
            files: set[str] = set()
            folders: set[str] = set()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            if entry.is_file():
                                files.add(entry.name)
                            elif entry.is_dir():
                                folders.add(entry.name)
                        except OSError:
                            continue  # a link that leads nowhere
            except OSError:
                pass
            self._listings[folder] = (frozenset(files), frozenset(folders))
        return self._listings[folder]

    def forget(self, path: Path) -> None:
        """Read ``path`` afresh: it was edited, saved, created or deleted (an editor's server).
        What was computed from its old content stays, keyed by that content."""
        self._hashes.pop(path, None)
        # A created or deleted module changes where imports lead.
        self._resolved.clear()
        self._module_files.clear()
        self._listings.clear()

    # ---- facts about a module -------------------------------------------------------------

    def content_hash(self, path: Path) -> str | None:
        if path not in self._hashes:
            data, digest = _read_and_digest(path)
            self._hashes[path] = digest
            if digest is not None and data is not None:
                _keep_recent(self._bytes, digest, data, 2 * MAX_TREES)
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
            _keep_recent(self._texts, digest, data.decode("utf-8", errors="replace"), 2 * MAX_TREES)
        return self._texts[digest]

    def outline(self, path: Path) -> ModuleOutline | None:
        """What the module imports and defines (CPython's parse, memory only); None when it cannot
        be read or parsed."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if digest not in self._outlines:
            from trllint.semantic.project.outline import outline_of

            tree = self._tree(path, digest)
            self._outlines[digest] = None if tree is None else outline_of(tree)
        return self._outlines[digest]

    def _tree(self, path: Path, digest: str, data: bytes | None = None) -> ast.Module | None:
        """CPython's tree of the module (its syntax check's parse: warnings silenced, failures
        None), kept while the next few questions about it are asked."""
        if digest not in self._trees:
            from trllint.core.source import SourceDecodeError, SourceFile
            from trllint.core.syntax import cpython_tree

            try:
                source = SourceFile.from_bytes(self._data(path, digest) if data is None else data, str(path))
                tree = cpython_tree(source)
            except (OSError, SourceDecodeError):
                tree = None
            _keep_recent(self._trees, digest, tree, MAX_TREES)
        return self._trees[digest]

    def spells(self, path: Path, tokens: AnyOf | AllOf) -> bool:
        """The module holds ``tokens``: its text one of each part's words, and its code, for a
        part's code tokens (``Calls``...), what they ask of CPython's parse of it (which they are
        asked of only when the text passes). Without them, a question about them has the answer
        of a module that does nothing, and the module need not be parsed."""
        from trllint.core.code_names import code_names
        from trllint.core.prefilter import FileCode

        def holds(data: bytes | None) -> bool:
            digest = self.content_hash(path) or ""

            def tree() -> ast.Module | None:  # asked only past the text
                return self._tree(path, digest, data)

            def names() -> CodeNames | None:
                parsed = tree()
                return None if parsed is None else code_names(parsed)

            return tokens.holds(self._text(digest, data), {}, None, FileCode(tree=tree, names=names))

        return self._read(path, self._spells, tokens, False, holds)

    def calls_one_of(self, path: Path, names: frozenset[str]) -> bool:
        """The module's code calls a function whose last name is one of ``names`` (``f(...)``,
        ``x.f(...)``), or imports one (then it may call it under another name); read from
        CPython's parse (a word in a string or a comment is none). True for a module CPython
        cannot parse: the fact's own parse decides."""
        return self._called(path, names)[0]

    def _called(self, path: Path, names: frozenset[str]) -> tuple[bool, frozenset[str] | None]:
        """``calls_or_imports_one_of`` of CPython's parse of the module; (True, None) where there
        is none (the fact's own parse decides)."""

        def called(data: bytes | None) -> tuple[bool, frozenset[str] | None]:
            from trllint.semantic.project.outline import calls_or_imports_one_of

            tree = None if data is None else self._tree(path, self.content_hash(path) or "", data)
            return (True, None) if tree is None else calls_or_imports_one_of(tree, names)

        return self._read(path, self._calls, names, (True, None), called)

    def definition_calls_one_of(self, path: Path, name: str, names: frozenset[str]) -> bool:
        """Some top-level definition ``name`` of the module spells, in its own code (comments and
        strings other than f-strings aside), one of ``names`` or a name an import of the module
        binds one under (``from torch.distributed import all_reduce as total``): else nothing
        ``name`` runs itself calls one, whatever the rest of the module does. True where that
        cannot be told from the module's statements (it has none CPython reads, or defines
        ``name`` nowhere at its top)."""
        digest = self.content_hash(path)
        cutter = None if digest is None else self._cutter(path, digest)
        bound = None if cutter is None else self._called(path, names)[1]
        if cutter is None or bound is None:
            return True
        spelled = [cutter.words_of(i) for i, statement in enumerate(cutter.statements) if statement.defines == name]
        return not spelled or any(not words.isdisjoint(names) or not words.isdisjoint(bound) for words in spelled)

    def names_only_where_defined(self, path: Path, name: str) -> bool:
        """No import in the module can bind ``name`` (``outline.names_only_where_defined``, read
        from its text)."""
        from trllint.semantic.project.outline import names_only_where_defined

        digest = self.content_hash(path) or ""
        return self._read(
            path, self._defines_only, name, False, lambda data: names_only_where_defined(self._text(digest, data), name)
        )

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
        name: str | None = None,
    ) -> ModuleAnswer | None:
        """What the module says for ``fact``: from memory, the disk cache, or one parse of it now;
        None when it cannot be read or parsed (then everything in it is unknown). When its text
        does not hold ``deep_if`` (spells none of its tokens; for an ``AllOf``, none of one
        part's), ``{}``: it says nothing, and is not parsed. ``parsed``: the
        modules parsed so far for the asker, by content hash, kept there for its next fact (the
        asker releases them); without it the parse is released at once. ``name``: the definition
        the asker will look up, when it looks up one: a fact ``per_definition`` then answers for
        it alone from its slice of the module when the slice is small (what else the answer
        holds is then left out; see ``_per_definition``)."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if deep_if is not None and not self.spells(path, deep_if):
            return None if self.outline(path) is None else {}
        if fact.calls and not self.calls_one_of(path, fact.calls):
            return None if self.outline(path) is None else {}
        if name is not None and fact.per_definition:
            if fact.calls and not self.definition_calls_one_of(path, name, fact.calls):
                return {}  # what it says of `name` is nothing, whatever it says of the rest
            part = self._per_definition(path, digest, fact, name)
            if part != READ_WHOLE:
                return part
        return self._kept(digest, fact.stored_as, lambda: self._compute(path, digest, fact, parsed))

    def _kept(self, digest: str, stored_as: str, compute: Callable[[], ModuleAnswer | None]) -> ModuleAnswer | None:
        """The answer the module's facts keep as ``stored_as``: from memory, the disk cache, or
        ``compute`` now (then kept in both; None, a module that cannot be read, in memory only)."""
        key = (digest, stored_as)
        if key not in self._facts:
            stored = self._stored(digest)
            if stored_as in stored:
                self._facts[key] = stored[stored_as]
            else:
                answer = compute()
                if answer is not None:
                    self._store(digest, stored_as, answer)
                self._facts[key] = answer
        return self._facts[key]

    def _per_definition(self, path: Path, digest: str, fact: ModuleFact, name: str) -> ModuleAnswer | None:
        """What ``fact`` says of the definition ``name`` (and, for a class, its methods), read from
        the module cut down to what that definition needs (``slices``); ``READ_WHOLE`` when the
        whole module is read for it instead: the slice would keep half of the module or more,
        or the module cannot be cut, or the slice cannot be read. Which of the two answers a
        definition depends on the module's content alone, never on what was asked before, and is
        kept with the answer: a file's findings are the same whichever files are linted with it."""
        return self._kept(digest, f"{fact.stored_as}#{SLICES}:{name}", lambda: self._slice_answer(path, digest, fact, name))

    def _slice_answer(self, path: Path, digest: str, fact: ModuleFact, name: str) -> ModuleAnswer:
        from trllint.core.source import SourceFile

        cutter = self._cutter(path, digest)
        cut = None if cutter is None else cutter.slice([name])
        if fact.says_nothing is not None and cutter is not None:
            # Proven silent on the part of the module the answer would be read from.
            read = cut if cut is not None and cut.worth_reading else cutter.whole([name])
            if read is not None and fact.says_nothing(read):
                return {}
        if cut is None or not cut.worth_reading:
            return READ_WHOLE
        answer = self._answer(fact, SourceFile(text=cut.text, display_path=str(path)))
        if answer is None:
            return READ_WHOLE
        return {k: v for k, v in answer.items() if k == name or k.startswith(name + ".")}

    def _cutter(self, path: Path, digest: str) -> ModuleCutter | None:
        """The module's statements and their words, read once for all its slices; None when it
        cannot be read or has no outline (CPython cannot parse it)."""
        if digest not in self._cutters:
            from trllint.core.source import SourceDecodeError, SourceFile
            from trllint.semantic.project.slices import ModuleCutter

            if len(self._cutters) >= MAX_CUTTERS:
                self._cutters.clear()  # a run over a whole tree: start afresh, not hold every module's words
            outline = self.outline(path)
            try:
                text = SourceFile.from_bytes(self._data(path, digest), str(path)).text
            except (OSError, SourceDecodeError):
                outline = None
            # The module's tree while the index keeps it (a slice's definitions then need no parse).
            kept_tree = partial(self._trees.get, digest)
            self._cutters[digest] = None if outline is None else ModuleCutter(text, outline, kept_tree)
        return self._cutters[digest]

    def _compute(
        self, path: Path, digest: str, fact: ModuleFact, parsed: dict[str, SourceFile] | None
    ) -> ModuleAnswer | None:
        if digest in self._unparsable:
            return None
        import libcst as cst

        from trllint.core.source import SourceDecodeError

        source = None if parsed is None else parsed.get(digest)
        if source is None:
            try:
                source = _parse(path)
            except (OSError, SourceDecodeError, cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
                self._unparsable.add(digest)  # no other fact of it can be computed either
                return None
            if parsed is not None:
                parsed[digest] = source
        try:
            return self._answer(fact, source, release=parsed is None)
        finally:
            if parsed is None:
                source.release()

    @staticmethod
    def _answer(fact: ModuleFact, source: SourceFile, release: bool = True) -> ModuleAnswer | None:
        """``fact`` computed on ``source`` (parsed here when it is not yet); None when it cannot
        be. The source is released after, unless ``release`` is False (the asker keeps it)."""
        import libcst as cst

        from trllint.semantic.model import SemanticModel

        try:
            # Through JSON at once: a fact read back from the disk cache is the same value.
            answer: ModuleAnswer = json.loads(json.dumps(fact.compute(SemanticModel.of(source))))
            return answer
        except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
            return None
        finally:
            if release:
                source.release()

    def _cache_file(self, digest: str) -> Path | None:
        if self._cache_folder is None:
            return None
        return self._cache_folder / f"module-facts-{FACTS_FILE_FORMAT}" / f"{digest}.json"

    def _stored(self, digest: str) -> dict[str, ModuleAnswer]:
        """Every fact the disk cache holds for the module (``key@version`` -> answer), read once."""
        if digest not in self._disk:
            self._disk[digest] = _read_facts(self._cache_file(digest))
        return self._disk[digest]

    def _store(self, digest: str, stored_as: str, answer: ModuleAnswer) -> None:
        """Keep ``answer`` as ``stored_as`` (``key@version``, or ``key@version#name`` for one
        definition's) in the module's cache file."""
        file = self._cache_file(digest)
        if file is None:
            return
        # Read again: another worker may have added a fact of its own since; an older version of
        # this one goes (with the answers it gave for single definitions).
        key, _, version = stored_as.partition("#")[0].rpartition("@")
        stored = {
            name: value
            for name, value in _read_facts(file).items()
            if name.partition("#")[0].rpartition("@")[0] != key or name.partition("#")[0].rpartition("@")[2] == version
        }
        stored[stored_as] = answer
        self._disk[digest] = stored
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            temp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
            temp.write_text(json.dumps(stored, separators=(",", ":")), encoding="utf-8")
            os.replace(temp, file)
        except OSError:
            pass  # a read-only tree still lints; it just computes the fact again next time


# A per-definition answer that says: read the whole module's answer (no definition is named "@").
READ_WHOLE: ModuleAnswer = {"@whole": True}
# Bumped whenever what a slice keeps changes: per-definition answers are kept under it.
SLICES = "slice5"


def _read_facts(file: Path | None) -> dict[str, ModuleAnswer]:
    if file is None:
        return {}
    try:
        stored = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return {}  # missing or damaged: computed again
    return {name: value for name, value in stored.items() if isinstance(value, dict)} if isinstance(stored, dict) else {}


def _parse(path: Path) -> SourceFile:
    """The module parsed by LibCST, for a fact that must read it (raises when it cannot be)."""
    from trllint.core.source import SourceFile

    source = SourceFile.from_bytes(read_module(path), str(path))
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


# The run's cache folder for module facts (None: memory only), set by the engine before linting.
_CACHE_FOLDER: list[Path | None] = [None]
_INDEXES: dict[tuple[Path, Path], ProjectIndex] = {}


def cache_folder() -> Path | None:
    """The folder :func:`use_cache_folder` set for this process (a pool hands it to its workers)."""
    return _CACHE_FOLDER[0]


def use_cache_folder(folder: Path | None) -> None:
    """Where module facts are kept between runs (the result cache's folder); None keeps them in memory."""
    _CACHE_FOLDER[0] = folder
    _INDEXES.clear()
    _project_of_folder.cache_clear()


# An editor's buffers of project modules, read in place of the files on disk (trllint server): a
# file linted in the editor sees the modules it imports as they are typed, saved or not.
_UNSAVED: dict[Path, bytes] = {}


def read_module(path: Path) -> bytes:
    """A project module's bytes: its editor buffer when one is open, else the file."""
    data = _UNSAVED.get(path)
    return path.read_bytes() if data is None else data


def has_unsaved_buffer(path: Path) -> bool:
    """An editor buffer stands for the module at ``path`` (``read_module`` reads it, not the file)."""
    return path in _UNSAVED


def use_unsaved(path: Path, data: bytes | None) -> None:
    """Read ``data`` as the module at ``path`` (None: the file on disk again, the buffer closed)."""
    path = path.resolve()
    if data is None:
        _UNSAVED.pop(path, None)
    else:
        _UNSAVED[path] = data
    forget_module(path)


def forget_module(path: Path) -> None:
    """Every index reads the module at ``path`` afresh (it changed on disk, or in an editor)."""
    path = path.resolve()
    for index in _INDEXES.values():
        index.forget(path)


def index_for(path: Path) -> ProjectIndex:
    root, scope = _project_of_folder(path.resolve().parent)
    if (root, scope) not in _INDEXES:
        _INDEXES[(root, scope)] = ProjectIndex(root, _CACHE_FOLDER[0], scope)
    return _INDEXES[(root, scope)]


@dataclass(frozen=True)
class Definition:
    """A function or a class defined at the top of another module of the project."""

    path: Path  # the module that defines it
    name: str  # its name there
    methods: tuple[str, ...] = ()  # a class's methods, as its outline lists them


@dataclass
class ProjectView:
    """One file's questions about the rest of its project.

    Where a name leads (:meth:`function`, :meth:`class_named`, :meth:`base_classes`) is read from
    outlines; what the defining module says is a fact asked of it (:meth:`fact`). A question may
    name the tokens (``deep_if``) without which a module cannot hold what it asks about: a module
    that spells none answers ``{}`` (a function that forwards nothing, a class that wraps
    nothing), without a parse.
    """

    path: Path
    index: ProjectIndex
    imports: dict[str, ImportRef]
    # The project modules this file's answers read: (path, content hash).
    consulted: dict[Path, str] = field(default_factory=dict)
    # The modules parsed for this file's questions, by content hash: the rules ask one module
    # several facts while the file is linted (a base class's wrapping, its methods' returns), so
    # it is parsed once for them all, and released with the file (:meth:`release`).
    parsed: dict[str, SourceFile] = field(default_factory=dict, repr=False)

    @classmethod
    def for_source(cls, source: SourceFile) -> ProjectView | None:
        """None for text that is no file, or that CPython cannot parse."""
        from trllint.semantic.project.outline import module_imports
        from trllint.core.syntax import cpython_tree

        if source.path is None:
            return None  # asked first: a module read for its facts is no file and needs no parse here
        tree = cpython_tree(source)
        if tree is None:
            return None
        path = source.path.resolve()
        return cls(path, index_for(path), module_imports(tree))

    def function(self, local_name: str) -> Definition | None:
        """The function this file imports from its project (``helper``, or ``utils.helper`` for
        ``import utils``), None when it is not one."""
        found = self._defined(local_name, "function")
        return None if found is None else Definition(*found)

    def function_spelling(self, local_name: str, tokens: AnyOf | AllOf) -> Definition | None:
        """:meth:`function`, when the module that defines it spells one of ``tokens``; else None.
        For a question only such a module can answer (what it says of a function comes from its
        text): a module on the way that spells none of them, and in which no import can bind the
        name (:meth:`ProjectIndex.names_only_where_defined`), cannot hand it on from elsewhere, so
        it is not outlined."""
        found = self._defined(local_name, "function", tokens)
        return None if found is None else Definition(*found)

    def class_named(self, local_name: str) -> Definition | None:
        """The class this file imports from its project, None when it is not one."""
        found = self._defined(local_name, "class")
        if found is None:
            return None
        outline = self._outline(found[0])
        return None if outline is None else Definition(found[0], found[1], outline.classes[found[1]].methods)

    def base_classes(self, cls: cst.ClassDef) -> list[Definition]:
        """The class's bases (and theirs) that live in other modules of the project, nearest
        first. A base outside the project ends its branch of the chain."""
        from trllint.core.cst.names import dotted_name

        return [
            Definition(module_path, class_name, outline.methods)
            for module_path, class_name, outline in self._base_chain([dotted_name(base.value) or "" for base in cls.bases])
        ]

    def fact(
        self, definition: Definition, fact: ModuleFact, deep_if: AnyOf | AllOf | None = None
    ) -> ModuleAnswer | None:
        """What the module that holds ``definition`` says for ``fact`` (all its definitions: look
        ``definition.name`` up in it, or the key the fact files it under); None when that module
        cannot be parsed."""
        return self.index.fact(definition.path, fact, deep_if, self.parsed, definition.name)

    def release(self) -> None:
        """Drop the modules parsed for this file's questions (the file is done)."""
        for source in self.parsed.values():
            source.release()
        self.parsed.clear()

    def reaches(self, tokens: AnyOf | AllOf, called: Iterable[str], class_bases: Iterable[str]) -> bool:
        """Some module of the project that defines a function this file calls (``called``: dotted
        names) or a base class of its classes (``class_bases``, and their bases) holds ``tokens``
        (``spells``: its text, then its code): asked before the file is parsed, of outlines, text
        and CPython's parse alone. What a fact could tell the file about those names comes from
        such a module, so without one it tells nothing."""
        for name in called:
            head = name.partition(".")[0]
            if head in ("self", "cls") or head not in self.imports:
                continue
            if self._defined(name, "function", tokens) is not None:
                return True
        return any(self.index.spells(path, tokens) for path, _, _ in self._base_chain(sorted(class_bases)))

    def _base_chain(self, bases: list[str]) -> list[tuple[Path, str, ClassOutline]]:
        """The modules and names of the classes ``bases`` (named in this file) and their bases,
        in other modules of the project, nearest first."""
        chain: list[tuple[Path, str, ClassOutline]] = []
        pending: list[tuple[Path, str]] = [(self.path, name) for name in bases]
        seen: set[tuple[Path, str]] = set()
        while pending and len(chain) < MAX_BASE_DEPTH:
            importer, name = pending.pop(0)
            if not name or (importer, name) in seen:
                continue
            seen.add((importer, name))
            found = self._class_from(importer, name)
            if found is None:
                continue
            module_path, class_name, outline = found
            chain.append(found)
            pending.extend((module_path, base) for base in outline.bases)
        return chain

    # ---- following names through outlines ---------------------------------------------------

    def _outline(self, path: Path) -> ModuleOutline | None:
        outline = self.index.outline(path)
        if outline is not None:
            self.consulted[path] = self.index.content_hash(path) or ""
        return outline

    def _defined(self, local_name: str, kind: str, spelling: AnyOf | AllOf | None = None) -> tuple[Path, str] | None:
        head, _, rest = local_name.partition(".")
        ref = self.imports.get(head)
        if ref is None:
            return None
        return self._lookup(self.path, ref, rest, kind, set(), spelling)

    def _lookup(
        self,
        importer: Path,
        ref: ImportRef,
        rest: str,
        kind: str,
        seen: set[tuple[Path, ImportRef, str]],
        spelling: AnyOf | AllOf | None = None,
    ) -> tuple[Path, str] | None:
        """The module that defines what ``ref`` (then ``rest``) names, and its name there (with
        ``spelling``: only when that module spells one of its tokens)."""
        key = (importer, ref, rest)
        if key in seen or len(seen) > MAX_BASE_DEPTH:
            return None  # an import cycle, or a chain of re-exports too long to follow
        seen.add(key)
        target = self.index.resolve(importer, ref)
        if target is None or target[0] == self.path:
            return None
        module_path, name = target
        parts = [p for p in ([name] if name else []) + (rest.split(".") if rest else []) if p]
        if (
            spelling is not None
            and parts
            and not self.index.spells(module_path, spelling)
            and self.index.names_only_where_defined(module_path, parts[0])
        ):
            # It defines the name or lacks it, and spells none of the tokens either way.
            self.consulted[module_path] = self.index.content_hash(module_path) or ""
            return None
        outline = self._outline(module_path)
        if outline is None or not parts:
            return None
        head, tail = parts[0], ".".join(parts[1:])
        if not tail and head in (outline.functions if kind == "function" else outline.classes):
            if spelling is not None and not self.index.spells(module_path, spelling):
                return None
            return module_path, head
        # Re-exported (`from .trainer import MyTrainer` in a package's __init__.py), or a
        # submodule reached through its package: follow the module's own import.
        again = outline.imports.get(head)
        if again is not None:
            return self._lookup(module_path, again, tail, kind, seen, spelling)
        return None

    def _class_from(self, importer: Path, name: str) -> tuple[Path, str, ClassOutline] | None:
        if importer == self.path:
            found = self._defined(name, "class")
        else:
            outline = self._outline(importer)
            if outline is None:
                return None
            head, _, rest = name.partition(".")
            if not rest and head in outline.classes:
                found = (importer, head)  # a base defined beside the class
            elif head in outline.imports:
                found = self._lookup(importer, outline.imports[head], rest, "class", set())
            else:
                found = None
        if found is None:
            return None
        outline = self._outline(found[0])
        return None if outline is None else (found[0], found[1], outline.classes[found[1]])

