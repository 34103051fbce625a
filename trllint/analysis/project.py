"""The project a file belongs to, and the modules of it that the file imports.

The project root is the folder of the nearest ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or
``.git`` above the file (else the file's own folder). An import is resolved to a file inside that
tree the way Python would find it when the project runs: relative imports from the importing
package; absolute ones from the script's folder (``sys.path[0]``), the folder above the file's
top package, the root and ``root/src``. A module outside the tree (installed trl, transformers,
accelerate) or one that does not exist is unknown, and unknown never makes a finding by itself.

The index is lazy: it summarises only the modules a linted file imports (and, for base classes,
what those import), once per file content. So the facts for a file depend on the file and the
modules it imports, never on which other paths were named on the command line (pre-commit passes
only the staged files), and a 2,000-module tree costs nothing it does not use.

Summaries (``trllint.analysis.summaries``) are kept per content hash in memory and, when the run
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
from typing import TYPE_CHECKING

import libcst as cst

from trllint.analysis.names import dotted_name, statement_blocks

if TYPE_CHECKING:
    from trllint.analysis.names import ImportMap
    from trllint.analysis.summaries import ClassSummary, FunctionSummary, ModuleSummary
    from trllint.source import SourceFile

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


@dataclass(frozen=True)
class ImportRef:
    """``from <module> import <name>`` (``level`` dots before the module) or ``import <module>``."""

    module: str
    level: int = 0
    name: str | None = None

    def to_json(self) -> list:
        return [self.module, self.level, self.name]

    @classmethod
    def from_json(cls, data: list) -> ImportRef:
        return cls(data[0], data[1], data[2])


def project_imports(module: cst.Module) -> dict[str, ImportRef]:
    """Local name -> where it comes from, for the module-level imports (relative ones included)."""
    found: dict[str, ImportRef] = {}

    def collect(statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    base = dotted_name(small.module) if small.module is not None else ""
                    for alias in small.names:
                        name = dotted_name(alias.name)
                        local = dotted_name(alias.asname.name) if alias.asname is not None else name
                        if name and local:
                            found[local] = ImportRef(base or "", len(small.relative), name)
                elif isinstance(small, cst.Import):
                    for alias in small.names:
                        full = dotted_name(alias.name)
                        if full and alias.asname is not None:
                            found[dotted_name(alias.asname.name) or full] = ImportRef(full)
                        elif full:
                            found.setdefault(full.split(".")[0], ImportRef(full.split(".")[0]))
        elif isinstance(statement, (cst.If, cst.Try)):
            for block in statement_blocks(statement):
                for inner in block.body:
                    collect(inner)

    for statement in module.body:
        collect(statement)
    return found


class ProjectIndex:
    """One project's modules: where an import leads, and the summary of what is there."""

    def __init__(self, root: Path, cache_folder: Path | None = None, scope: Path | None = None) -> None:
        self.root = root
        self.scope = root if scope is None else scope
        self._cache_folder = cache_folder
        self._summaries: dict[str, ModuleSummary | None] = {}  # by content hash
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

    def summary(self, path: Path) -> ModuleSummary | None:
        """The module's summary, from memory, the disk cache, or one parse; None when it cannot
        be read or parsed (then everything in it is unknown)."""
        digest = self.content_hash(path)
        if digest is None:
            return None
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
        from trllint.analysis.summaries import SUMMARY_FORMAT

        return self._cache_folder / f"summaries-{SUMMARY_FORMAT}" / f"{digest}.json"

    def _load(self, digest: str) -> ModuleSummary | None:
        file = self._cache_file(digest)
        if file is None:
            return None
        from trllint.analysis.summaries import ModuleSummary

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
    from trllint.analysis.summaries import summarise_module
    from trllint.source import SourceDecodeError, SourceFile

    try:
        source = SourceFile.from_bytes(path.read_bytes(), str(path))
        source.module
        return summarise_module(source)
    except (OSError, SourceDecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
        return None


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
    """One file's questions about the rest of its project."""

    path: Path
    index: ProjectIndex
    imports: dict[str, ImportRef]
    # The project modules whose summaries this file's answers read: (path, content hash).
    consulted: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def for_source(cls, source: SourceFile, imports: ImportMap) -> ProjectView | None:
        if source.path is None:
            return None
        path = source.path.resolve()
        return cls(path, index_for(path), project_imports(source.module))

    def _module(self, importer: Path, ref: ImportRef) -> tuple[ModuleSummary, str | None] | None:
        target = self.index.resolve(importer, ref)
        if target is None or target[0] == self.path:
            return None
        summary = self.index.summary(target[0])
        if summary is None:
            return None
        self.consulted[target[0]] = self.index.content_hash(target[0]) or ""
        return summary, target[1]

    def function(self, local_name: str) -> FunctionSummary | None:
        """The summary of a function this file imports from its project (``helper`` or
        ``utils.helper`` for ``import utils``), None when it is not one."""
        head, _, rest = local_name.partition(".")
        ref = self.imports.get(head)
        if ref is None:
            return None
        found = self._lookup(self.path, ref, rest, "function", set())
        return found  # type: ignore[return-value]

    def class_named(self, local_name: str) -> tuple[ClassSummary, Path] | None:
        head, _, rest = local_name.partition(".")
        ref = self.imports.get(head)
        if ref is None:
            return None
        return self._lookup(self.path, ref, rest, "class", set())  # type: ignore[return-value]

    def _lookup(self, importer: Path, ref: ImportRef, rest: str, kind: str, seen: set):
        key = (importer, ref, rest)
        if key in seen or len(seen) > MAX_BASE_DEPTH:
            return None  # an import cycle, or a chain of re-exports too long to follow
        seen.add(key)
        found = self._module(importer, ref)
        if found is None:
            return None
        summary, name = found
        target = self.index.resolve(importer, ref)
        assert target is not None
        module_path = target[0]
        parts = [p for p in ([name] if name else []) + (rest.split(".") if rest else []) if p]
        if not parts:
            return None
        head, tail = parts[0], ".".join(parts[1:])
        if not tail:
            if kind == "function" and head in summary.functions:
                return summary.functions[head]
            if kind == "class" and head in summary.classes:
                return summary.classes[head], module_path
        # Re-exported (`from .trainer import MyTrainer` in a package's __init__.py), or a
        # submodule reached through its package: follow the module's own import.
        again = summary.imports.get(head)
        if again is not None:
            return self._lookup(module_path, again, tail, kind, seen)
        return None

    def base_classes(self, cls: cst.ClassDef) -> list[ClassSummary]:
        """The class's bases (and theirs) that live in other modules of the project, nearest
        first. A base outside the project ends its branch of the chain."""
        chain: list[ClassSummary] = []
        pending: list[tuple[Path, str]] = [(self.path, dotted_name(base.value) or "") for base in cls.bases]
        seen: set[tuple[Path, str]] = set()
        while pending and len(chain) < MAX_BASE_DEPTH:
            importer, name = pending.pop(0)
            if not name or (importer, name) in seen:
                continue
            seen.add((importer, name))
            found = self._class_from(importer, name)
            if found is None:
                continue
            summary, module_path = found
            chain.append(summary)
            pending.extend((module_path, base) for base in summary.bases)
        return chain

    def _class_from(self, importer: Path, name: str) -> tuple[ClassSummary, Path] | None:
        if importer == self.path:
            return self.class_named(name)
        summary = self.index.summary(importer)
        if summary is None:
            return None
        head, _, rest = name.partition(".")
        if not rest and head in summary.classes:
            return summary.classes[head], importer  # a base defined beside the class
        ref = summary.imports.get(head)
        if ref is None:
            return None
        return self._lookup(importer, ref, rest, "class", set())
