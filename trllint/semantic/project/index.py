"""The project a linted file belongs to, and the modules of it that the file imports: a file's
view of its project (:class:`ProjectView`), over one index per project and process.

Where an import leads is ``trllint.semantic.project.resolution``; a project's modules, their
outlines and facts, ``trllint.semantic.project.modules``; the facts kept on disk by content,
``trllint.semantic.project.fact_cache``; an editor's unsaved buffers,
``trllint.semantic.project.buffers``. The names other layers use are kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from trllint.core.prefilter import AnyOf
from trllint.semantic.project.buffers import keep_buffer
from trllint.semantic.project.modules import ProjectIndex, modules_listing_digest
from trllint.semantic.project.resolution import project_of_folder
from trllint.semantic.project.summaries import CONSULTED

if TYPE_CHECKING:
    import libcst as cst

    from trllint.core.prefilter import AllOf
    from trllint.core.source import SourceFile
    from trllint.semantic.project.outline import ClassOutline, ImportRef, Keeper, ModuleOutline
    from trllint.semantic.project.summaries import ModuleAnswer, ModuleFact

__all__ = [
    "MODULES_IN_FOLDER",
    "PROJECT_MODULES",
    "Definition",
    "ProjectView",
    "cache_folder",
    "forget_module",
    "index_for",
    "project_modules_unchanged",
    "use_cache_folder",
    "use_unsaved",
]

# How many base classes (across modules) one class's chain may follow: cycles and runaway chains end.
MAX_BASE_DEPTH = 16
# How many modules beside a file are read for subclasses of its classes: a folder of a package,
# not a dump of generated files.
MAX_MODULES_BESIDE = 256
# A result's dependency on which modules a folder holds (``ProjectView.listings``), as the result
# cache keys it: the prefix, then the folder.
MODULES_IN_FOLDER = "modules-in-folder:"
# A result's dependency on the whole project's modules (``ProjectView.modules_calling`` read them
# all), as the result cache keys it: the prefix, then the project's folder.
PROJECT_MODULES = "project-modules:"

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
    project_of_folder.cache_clear()


def use_unsaved(path: Path, data: bytes | None) -> None:
    """Read ``data`` as the module at ``path`` (None: the file on disk again, the buffer closed)."""
    path = path.resolve()
    keep_buffer(path, data)
    forget_module(path)


def forget_module(path: Path) -> None:
    """Every index reads the module at ``path`` afresh (it changed on disk, or in an editor)."""
    path = path.resolve()
    for index in _INDEXES.values():
        index.forget(path)


def index_for(path: Path) -> ProjectIndex:
    return _index_of_folder(path.resolve().parent)


def _index_of_folder(folder: Path) -> ProjectIndex:
    root, scope = project_of_folder(folder)
    if (root, scope) not in _INDEXES:
        _INDEXES[(root, scope)] = ProjectIndex(root, _CACHE_FOLDER[0], scope)
    return _INDEXES[(root, scope)]


def project_modules_unchanged(folder: Path, stamp: str) -> bool:
    """No module of the project at ``folder`` was added, removed or written since it had
    ``stamp`` (``ProjectIndex.modules_stamp``): a stat of each, no read, so a warm run stays warm."""
    return _index_of_folder(folder).modules_stamp() == stamp


@dataclass(frozen=True)
class Definition:
    """A function or a class defined at the top of another module of the project."""

    path: Path  # the module that defines it
    name: str  # its name there
    methods: tuple[str, ...] = ()  # a class's methods, as its outline lists them
    keepers: tuple[Keeper, ...] = ()  # a class's methods that keep an argument as an attribute
    setting_up: tuple[tuple[str, str], ...] = ()  # (attribute, method it runs while it binds that)


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
    # The folders whose list of modules this file's answers read: (folder, modules_listing_digest).
    listings: dict[Path, str] = field(default_factory=dict)
    # The projects whose every module this file's answers read: (folder, modules_stamp).
    projects: dict[Path, str] = field(default_factory=dict)
    # The modules parsed for this file's questions, by content hash: the rules ask one module
    # several facts while the file is linted (a base class's wrapping, its methods' returns), so
    # it is parsed once for them all, and released with the file (:meth:`release`).
    parsed: dict[str, SourceFile] = field(default_factory=dict, repr=False)
    for_facts: bool = False  # the view of a module read for its facts (for_module_read_for_facts)

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

    @classmethod
    def for_module_read_for_facts(cls, path: Path) -> ProjectView | None:
        """The view of a module the index reads for its facts, from its outline; it may be asked
        only facts computed from their own module alone (``ModuleFact.reads_other_modules``
        False), so that no fact's computation asks itself again through a circle of imports."""
        index = index_for(path)
        outline = index.outline(path)
        return None if outline is None else cls(path, index, outline.imports, for_facts=True)

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
            Definition(module_path, class_name, outline.methods, outline.keepers, outline.setting_up)
            for module_path, class_name, outline in self._base_chain([dotted_name(base.value) or "" for base in cls.bases])
        ]

    def modules_calling(self, methods: Iterable[str]) -> list[Path]:
        """The modules of the whole project (this file too) whose text spells a call of one of
        ``methods`` as a method: where a class's instance may be handed something, whichever
        module holds the instance (a trainer calls ``self.model.set_prepared_model(...)`` on a
        model class it never imports). The project's modules' stamp is recorded (``projects``):
        a module added, removed or written anywhere in the project lints the file again."""
        wanted = frozenset(methods)
        if not wanted:
            return []
        self.projects[self.index.scope] = self.index.modules_stamp()
        return self.index.modules_calling(wanted)

    def subclasses_beside(self, names: Iterable[str]) -> list[Definition]:
        """The classes that the modules beside this file (in its folder) derive from one of this
        file's classes ``names``, imported from it: a base's methods run on their instances too
        (trlx's trainers prepare the ``self.model`` that their base's ``generate`` reads). Which
        modules the folder holds is recorded (``listings``): a module added or removed beside the
        file lints it again."""
        wanted = frozenset(names)
        self.listings[self.path.parent] = modules_listing_digest(self.path.parent)
        spelled = AnyOf(*sorted(wanted))
        found: list[Definition] = []
        for path in self.index.modules_beside(self.path)[:MAX_MODULES_BESIDE]:
            # A module that spells none of the names derives from none of them: its text is read,
            # and its outline only where it does.
            self.consulted[path] = self.index.content_hash(path) or ""
            if not wanted or not self.index.spells(path, spelled):
                continue
            outline = self._outline(path)
            if outline is None:
                continue
            for name, cls in outline.classes.items():
                if any(self._names_a_class_of_this_file(path, outline, base, wanted) for base in cls.bases):
                    found.append(Definition(path, name, cls.methods))
        return found

    def _names_a_class_of_this_file(self, importer: Path, outline: ModuleOutline, base: str, names: frozenset[str]) -> bool:
        """``base``, as the module ``importer`` writes it, is one of this file's classes ``names``."""
        head, _, rest = base.partition(".")
        ref = outline.imports.get(head)
        target = self.index.resolve(importer, ref) if ref is not None else None
        if target is None or target[0] != self.path:
            return False
        return ".".join(part for part in (target[1], rest) if part) in names

    def fact(
        self, definition: Definition, fact: ModuleFact, deep_if: AnyOf | AllOf | None = None
    ) -> ModuleAnswer | None:
        """What the module that holds ``definition`` says for ``fact`` (all its definitions: look
        ``definition.name`` up in it, or the key the fact files it under); None when that module
        cannot be parsed."""
        if self.for_facts and fact.reads_other_modules:
            raise ValueError(f"{fact.key} reads other modules: a module read for its facts cannot ask it")
        answer = self.index.fact(definition.path, fact, deep_if, self.parsed)
        if answer is None or CONSULTED not in answer:
            return answer
        for path, digest in answer[CONSULTED].items():
            self.consulted[Path(path)] = digest  # what the answer read, this file's answers read too
        return {name: said for name, said in answer.items() if name != CONSULTED}

    def release(self) -> None:
        """Drop the modules parsed for this file's questions (the file is done)."""
        for source in self.parsed.values():
            source.release()
        self.parsed.clear()

    def relative(self, path: Path) -> str:
        """``path`` as the project names it (from its folder), for messages."""
        try:
            return path.relative_to(self.index.scope).as_posix()
        except ValueError:
            return path.name

    def keeper_callers_spell(self, tokens: AnyOf | AllOf, class_bases: Iterable[str], read: Iterable[str]) -> bool:
        """Some module of the project that calls a method by which one of ``class_bases`` (as this
        file names them, and their bases, in other modules of the project) keeps an argument as
        one of the attributes ``read`` (``self.<attribute>.<member>`` in this file's text) spells
        ``tokens``: asked of outlines and text alone."""
        wanted = set(read)
        keepers = {
            k.method
            for _, _, outline in self._base_chain(sorted(class_bases))
            for k in outline.keepers
            if k.attribute in wanted
        }
        return any(self.index.spells(path, tokens) for path in self.modules_calling(keepers))

    def reaches(
        self, tokens: AnyOf | AllOf, called: Iterable[str], class_bases: Iterable[str], derived_from: Iterable[str] = ()
    ) -> bool:
        """Some module of the project that defines a function or a class this file calls (``called``: dotted
        names), a base class of its classes (``class_bases``, and their bases) or a module beside
        it that derives a class from one of ``derived_from`` (its classes) holds ``tokens``
        (``spells``: its text): asked before the file is parsed, of outlines and text alone. What
        a fact could tell the file about those names comes from such a module, so without one it
        tells nothing."""
        for name in called:
            head = name.partition(".")[0]
            if head in ("self", "cls") or head not in self.imports:
                continue
            # A class the file constructs leads on too: its methods are what the file then calls.
            if self._defined(name, "function", tokens) is not None or self._defined(name, "class", tokens) is not None:
                return True
        if any(self.index.spells(path, tokens) for path, _, _ in self._base_chain(sorted(class_bases))):
            return True
        derived_from = frozenset(derived_from)
        return bool(derived_from) and any(self.index.spells(d.path, tokens) for d in self.subclasses_beside(derived_from))

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
        # Read even when it cannot be outlined: once it is mended, what it says may change the answers.
        self.consulted[path] = self.index.content_hash(path) or ""
        return self.index.outline(path)

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

