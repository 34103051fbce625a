"""Where an import of a project's file leads: the project's root, and the file a module name names.

The project root is the folder of the nearest ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or
``.git`` above the file (else the file's own folder). An import is resolved to a file inside that
tree the way Python would find it when the project runs: relative imports from the importing
package; absolute ones from the script's folder (``sys.path[0]``), the folder above the file's
top package, the root and ``root/src``. A module outside the tree (installed trl, transformers,
accelerate) or one that does not exist is unknown, and unknown never makes a finding by itself.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trllint.semantic.project.outline import ImportRef

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# Folders that hold installed packages, each its own project.
_INSTALLED_PACKAGES = ("site-packages", "dist-packages")


def project_root(path: Path) -> Path:
    """The folder of the nearest project marker above ``path``; else (an installed or unpacked
    package) the folder that holds its top package, where Python would find it."""
    return project_of_folder(path.resolve().parent)[0]


def project_scope(path: Path) -> Path:
    """The folder that holds the project's own files: its root, or for an installed package the
    package's folder (site-packages holds many projects)."""
    return project_of_folder(path.resolve().parent)[1]


@lru_cache(maxsize=4096)
def project_of_folder(folder: Path) -> tuple[Path, Path]:
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


class ImportResolver:
    """One project's imports: the file each leads to, looked up once per importing folder."""

    def __init__(self, root: Path, scope: Path) -> None:
        self.root = root
        self.scope = scope
        self._resolved: dict[tuple[Path, ImportRef], tuple[Path, str | None] | None] = {}
        self._bases_of_folder: dict[Path, list[Path]] = {}
        self._module_files: dict[tuple[Path, tuple[str, ...]], Path | None] = {}
        # folder -> the names of its files and of its folders: an import's candidates are looked
        # up in its folder's listing, one read of the folder rather than a stat per candidate
        self._listings: dict[Path, tuple[frozenset[str], frozenset[str]]] = {}

    def resolve(self, importer: Path, ref: ImportRef) -> tuple[Path, str | None] | None:
        """The project file ``ref`` leads to, and the name to look up in it (None: the module
        itself). None when it leads outside the project or nowhere."""
        key = (importer, ref)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(importer, ref)
        return self._resolved[key]

    def forget(self) -> None:
        """A module was created or deleted: where imports lead is looked up afresh."""
        self._resolved.clear()
        self._module_files.clear()
        self._listings.clear()

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
            if part not in self.listing(folder)[1]:
                return None
            folder = folder / part
        files, folders = self.listing(folder)
        if parts[-1] + ".py" in files:
            candidate = folder / (parts[-1] + ".py")
        elif parts[-1] in folders:
            return self._package_init(folder / parts[-1])
        else:
            return None
        return candidate if self._inside(candidate) else None

    def _package_init(self, base: Path) -> Path | None:
        candidate = base / "__init__.py"
        return candidate if "__init__.py" in self.listing(base)[0] and self._inside(candidate) else None

    def listing(self, folder: Path) -> tuple[frozenset[str], frozenset[str]]:
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
