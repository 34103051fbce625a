"""The project a file belongs to, and the modules of it that the file imports.

The project root is the folder of the nearest ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or
``.git`` above the file (else the file's own folder). An import is resolved to a file inside that
tree the way Python would find it when the project runs: relative imports from the importing
package; absolute ones from the script's folder (``sys.path[0]``), the folder above the file's
top package, the root and ``root/src``. A module outside the tree (installed trl, transformers,
accelerate) or one that does not exist is unknown, and unknown never makes a finding by itself.

The index is lazy: it outlines only the modules a linted file imports (and, for base classes and
re-exports, what those import), once per file content. An outline (``trllint.semantic.project.outline``,
CPython's parser) is enough to follow a name to the module that defines it; that module is
summarised (LibCST and the rules' analyses) only when its text spells what the question needs. So the facts for a file depend on the file and the
modules it imports, never on which other paths were named on the command line (pre-commit passes
only the staged files), and a 2,000-module tree costs nothing it does not use.

Summaries (``trllint.semantic.project.summaries``) are kept per content hash in memory and, when the run
has a cache folder, on disk: a warm run parses no imported module, and a pre-commit run on one
file reads only the summaries of the modules it imports.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.semantic.project.outline import ClassOutline, ImportRef, ModuleOutline, outline_of

if TYPE_CHECKING:
    from trllint.core.prefilter import AnyOf
    from trllint.semantic.project.summaries import ClassSummary, FunctionSummary, ModuleSummary
    from trllint.core.source import SourceFile

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# Folders that hold installed packages, each its own project.
_INSTALLED_PACKAGES = ("site-packages", "dist-packages")
# A module bigger than this is not summarised (it is unknown): the bound on what one import costs.
MAX_MODULE_BYTES = 2_000_000
# How many base classes (across modules) one class's chain may follow: cycles and runaway chains end.
MAX_BASE_DEPTH = 16


def project_root(path: Path) -> Path:
    """The folder of the nearest project marker above ``path``; else (an installed or unpacked
    package) the folder that holds its top package, where Python would find it."""
    return _project_of_folder(path.resolve().parent)[0]


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


class ProjectIndex:
    """One project's modules: where an import leads, and the summary of what is there."""

    def __init__(self, root: Path, cache_folder: Path | None = None, scope: Path | None = None) -> None:
        self.root = root
        self.scope = root if scope is None else scope
        self._cache_folder = cache_folder
        self._summaries: dict[str, ModuleSummary | None] = {}  # by content hash
        self._outlines: dict[str, ModuleOutline | None] = {}  # by content hash
        self._spells: dict[tuple[str, AnyOf], bool] = {}
        self._plain: dict[str, ModuleSummary | None] = {}  # by content hash, from the outline
        self._hashes: dict[Path, str | None] = {}
        self._resolved: dict[tuple[Path, ImportRef], tuple[Path, str | None] | None] = {}

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
        stem = base.joinpath(*parts)
        for candidate in (stem.with_name(stem.name + ".py"), stem / "__init__.py"):
            if candidate.is_file() and self._inside(candidate):
                return candidate
        return None

    def _package_init(self, base: Path) -> Path | None:
        candidate = base / "__init__.py"
        return candidate if candidate.is_file() and self._inside(candidate) else None

    # ---- summaries ------------------------------------------------------------------------

    def content_hash(self, path: Path) -> str | None:
        if path not in self._hashes:
            try:
                data = path.read_bytes()
            except OSError:
                data = None
            self._hashes[path] = (
                None if data is None or len(data) > MAX_MODULE_BYTES else hashlib.sha256(data).hexdigest()
            )
        return self._hashes[path]

    def outline(self, path: Path) -> ModuleOutline | None:
        """What the module imports and defines (CPython's parse, memory only); None when it cannot
        be read or parsed."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if digest not in self._outlines:
            self._outlines[digest] = _outline(path)
        return self._outlines[digest]

    def spells(self, path: Path, tokens: AnyOf) -> bool:
        """The module's text holds one of ``tokens``: without one, a question about them has the
        answer of a module that does nothing, and the module need not be summarised."""
        digest = self.content_hash(path)
        if digest is None:
            return False
        key = (digest, tokens)
        if key not in self._spells:
            try:
                text = path.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                text = ""
            self._spells[key] = tokens.holds(text, {})
        return self._spells[key]

    def summary(self, path: Path, deep_if: AnyOf | None = None) -> ModuleSummary | None:
        """The module's summary, from memory, the disk cache, or one parse; None when it cannot
        be read or parsed (then everything in it is unknown). When the text spells none of
        ``deep_if``, the summary of its outline: its functions and classes doing nothing."""
        digest = self.content_hash(path)
        if digest is None:
            return None
        if deep_if is not None and not self.spells(path, deep_if):
            if digest not in self._plain:
                outline = self.outline(path)
                self._plain[digest] = None if outline is None else _plain_summary(outline)
            return self._plain[digest]
        if digest not in self._summaries:
            summary = self._load(digest)
            if summary is None:
                summary = _summarise(path, digest)
                if summary is not None:
                    self._store(digest, summary)
            self._summaries[digest] = summary
        return self._summaries[digest]

    def _cache_file(self, digest: str) -> Path | None:
        if self._cache_folder is None:
            return None
        from trllint.semantic.project.summaries import SUMMARY_FORMAT

        return self._cache_folder / f"summaries-{SUMMARY_FORMAT}" / f"{digest}.json"

    def _load(self, digest: str) -> ModuleSummary | None:
        file = self._cache_file(digest)
        if file is None:
            return None
        from trllint.semantic.project.summaries import ModuleSummary

        try:
            return ModuleSummary.from_json(json.loads(file.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None  # missing or damaged: summarise again

    def _store(self, digest: str, summary: ModuleSummary) -> None:
        file = self._cache_file(digest)
        if file is None:
            return
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            temp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
            temp.write_text(json.dumps(summary.to_json(), separators=(",", ":")), encoding="utf-8")
            os.replace(temp, file)
        except OSError:
            pass  # a read-only tree still lints; it just summarises again next time


def _summarise(path: Path, digest: str) -> ModuleSummary | None:
    from trllint.semantic.project.summaries import summarise_module
    from trllint.core.source import SourceDecodeError, SourceFile

    source = None
    try:
        source = SourceFile.from_bytes(path.read_bytes(), str(path))
        source.module
        return summarise_module(source)
    except (OSError, SourceDecodeError, cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
        return None
    finally:
        if source is not None:
            source.release()


def _plain_summary(outline: ModuleOutline) -> ModuleSummary:
    from trllint.semantic.project.summaries import ClassSummary, FunctionSummary, ModuleSummary

    return ModuleSummary(
        {name: FunctionSummary(name) for name in outline.functions},
        {
            name: ClassSummary(name, c.bases, {m: FunctionSummary(m) for m in c.methods})
            for name, c in outline.classes.items()
        },
    )


def _outline(path: Path) -> ModuleOutline | None:
    from trllint.core.source import SourceDecodeError, SourceFile
    from trllint.core.syntax import cpython_tree

    try:
        source = SourceFile.from_bytes(path.read_bytes(), str(path))
    except (OSError, SourceDecodeError):
        return None
    tree = cpython_tree(source)  # the syntax check's parse: its warnings silenced, its failures None
    return None if tree is None else outline_of(tree)


# The run's cache folder for summaries (None: memory only), set by the engine before linting.
_CACHE_FOLDER: list[Path | None] = [None]
_INDEXES: dict[tuple[Path, Path], ProjectIndex] = {}


def use_cache_folder(folder: Path | None) -> None:
    """Where summaries are kept between runs (the result cache's folder); None keeps them in memory."""
    _CACHE_FOLDER[0] = folder
    _INDEXES.clear()
    _project_of_folder.cache_clear()


def index_for(path: Path) -> ProjectIndex:
    root, scope = _project_of_folder(path.resolve().parent)
    if (root, scope) not in _INDEXES:
        _INDEXES[(root, scope)] = ProjectIndex(root, _CACHE_FOLDER[0], scope)
    return _INDEXES[(root, scope)]


@dataclass
class ProjectView:
    """One file's questions about the rest of its project.

    Each question names the tokens (``deep_if``) without which a module cannot hold what it asks
    about: a module that spells none answers as one that does nothing (a function that forwards
    nothing, a class that wraps nothing), from its outline, without a summary. None: always ask
    the summary.
    """

    path: Path
    index: ProjectIndex
    imports: dict[str, ImportRef]
    # The project modules this file's answers read: (path, content hash).
    consulted: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def for_source(cls, source: SourceFile) -> ProjectView | None:
        """None for text that is no file, or that CPython cannot parse."""
        from trllint.semantic.project.outline import module_imports
        from trllint.core.syntax import cpython_tree

        tree = cpython_tree(source)
        if source.path is None or tree is None:
            return None
        path = source.path.resolve()
        return cls(path, index_for(path), module_imports(tree))

    def function(self, local_name: str, deep_if: AnyOf | None = None) -> FunctionSummary | None:
        """The summary of a function this file imports from its project (``helper`` or
        ``utils.helper`` for ``import utils``), None when it is not one."""
        found = self._defined(local_name, "function")
        return None if found is None else self._function(found[0], found[1], deep_if)

    def class_named(self, local_name: str, deep_if: AnyOf | None = None) -> tuple[ClassSummary, Path] | None:
        found = self._defined(local_name, "class")
        if found is None:
            return None
        summary = self._class(found[0], found[1], deep_if)
        return None if summary is None else (summary, found[0])

    def base_classes(self, cls: cst.ClassDef, deep_if: AnyOf | None = None) -> list[ClassSummary]:
        """The class's bases (and theirs) that live in other modules of the project, nearest
        first. A base outside the project ends its branch of the chain."""
        chain = []
        for module_path, class_name in self._base_chain([dotted_name(base.value) or "" for base in cls.bases]):
            summary = self._class(module_path, class_name, deep_if)
            if summary is not None:
                chain.append(summary)
        return chain

    def project_names(self) -> list[str]:
        """The names this file imports from modules of its project."""
        return [local for local, ref in self.imports.items() if self.index.resolve(self.path, ref) is not None]

    def reaches(self, tokens: AnyOf, called: Iterable[str], class_bases: Iterable[str]) -> bool:
        """Some module of the project that defines a function this file calls (``called``: dotted
        names) or a base class of its classes (``class_bases``, and their bases) spells one of
        ``tokens``: asked before the file is parsed, of outlines and text alone. What a summary
        could tell the file about those names comes from such a module, so without one it
        tells nothing."""
        for name in called:
            head = name.partition(".")[0]
            if head in ("self", "cls") or head not in self.imports:
                continue
            found = self._defined(name, "function")
            if found is not None and self.index.spells(found[0], tokens):
                return True
        return any(self.index.spells(path, tokens) for path, _ in self._base_chain(sorted(class_bases)))

    def _base_chain(self, bases: list[str]) -> list[tuple[Path, str]]:
        """The modules and names of the classes ``bases`` (named in this file) and their bases,
        in other modules of the project, nearest first."""
        chain: list[tuple[Path, str]] = []
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
            chain.append((module_path, class_name))
            pending.extend((module_path, base) for base in outline.bases)
        return chain

    # ---- following names through outlines ---------------------------------------------------

    def _outline(self, path: Path) -> ModuleOutline | None:
        outline = self.index.outline(path)
        if outline is not None:
            self.consulted[path] = self.index.content_hash(path) or ""
        return outline

    def _defined(self, local_name: str, kind: str) -> tuple[Path, str] | None:
        head, _, rest = local_name.partition(".")
        ref = self.imports.get(head)
        if ref is None:
            return None
        return self._lookup(self.path, ref, rest, kind, set())

    def _lookup(self, importer: Path, ref: ImportRef, rest: str, kind: str, seen: set) -> tuple[Path, str] | None:
        """The module that defines what ``ref`` (then ``rest``) names, and its name there."""
        key = (importer, ref, rest)
        if key in seen or len(seen) > MAX_BASE_DEPTH:
            return None  # an import cycle, or a chain of re-exports too long to follow
        seen.add(key)
        target = self.index.resolve(importer, ref)
        if target is None or target[0] == self.path:
            return None
        module_path, name = target
        outline = self._outline(module_path)
        if outline is None:
            return None
        parts = [p for p in ([name] if name else []) + (rest.split(".") if rest else []) if p]
        if not parts:
            return None
        head, tail = parts[0], ".".join(parts[1:])
        if not tail and head in (outline.functions if kind == "function" else outline.classes):
            return module_path, head
        # Re-exported (`from .trainer import MyTrainer` in a package's __init__.py), or a
        # submodule reached through its package: follow the module's own import.
        again = outline.imports.get(head)
        if again is not None:
            return self._lookup(module_path, again, tail, kind, seen)
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

    # ---- what the defining module says ----------------------------------------------------

    def _function(self, path: Path, name: str, deep_if: AnyOf | None) -> FunctionSummary | None:
        summary = self.index.summary(path, deep_if)
        return None if summary is None else summary.functions.get(name)

    def _class(self, path: Path, name: str, deep_if: AnyOf | None) -> ClassSummary | None:
        summary = self.index.summary(path, deep_if)
        return None if summary is None else summary.classes.get(name)
