"""A file's view of its project, asked of the file's semantic model.

The project index builds models of the modules it reads, so the model does not know the project:
these are functions of the model, cached on it like any fact. This module is light on purpose
(the index, with its hashing and caches, is imported only when a question reaches the project),
so a fact or a rule may import it at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trllint.core.prefilter import AllOf, AnyOf
    from trllint.semantic.model import SemanticModel
    from trllint.semantic.project.index import ProjectView


def project_view(model: SemanticModel) -> ProjectView | None:
    """The file's view of its project: the modules it imports, summarised. None for text that is
    no file of a project (standard input, a rule case held in memory)."""
    from trllint.semantic.project.index import ProjectView

    return model.once((project_view,), lambda: ProjectView.for_source(model.source))


def imported_classes_view(model: SemanticModel) -> ProjectView | None:
    """Where the classes this module imports from its project are defined: a linted file's
    project view; for a module the index read for its facts (which has none: its facts would
    read other modules' facts, in a circle), a view of its own imports that may be asked only
    facts computed from their own module alone (``SYNCS_ITS_OBJECT``). What that view reads is
    listed in the answer of the fact being computed (``summaries.CONSULTED``)."""
    from trllint.semantic.project.index import ProjectView
    from trllint.semantic.project.summaries import module_read_for_facts, modules_consulted_by_facts

    view = project_view(model)
    path = module_read_for_facts(model)
    if view is not None or path is None:
        return view

    def for_module() -> ProjectView | None:
        found = ProjectView.for_module_read_for_facts(path)
        if found is not None:
            model.once((modules_consulted_by_facts,), lambda: found.consulted)
        return found

    return model.once((imported_classes_view,), for_module)


def project_reaches(
    model: SemanticModel,
    tokens: AnyOf | AllOf,
    *,
    calls: bool = True,
    reading: frozenset[str] | None = None,
    subclasses: bool = False,
    kept: bool = False,
) -> bool:
    """Some module of the project that this file's calls (unless ``calls`` is False) or classes'
    bases (with ``reading``, see ``outline.class_bases``) lead to holds ``tokens``, or (with
    ``subclasses``) a module beside it that derives a class from a class of it that so reads
    (:meth:`ProjectView.reaches`): a prefilter's :class:`~trllint.core.prefilter.Reached`, asked of
    the file's calls and the outline of its classes, or (with ``kept``) a module anywhere in the
    project that calls a method by which a base class of the file's classes keeps an attribute
    the file reads (:meth:`ProjectView.keeper_callers_spell`). A file CPython cannot parse is let
    through: its syntax error is reported by the rule's run."""
    from trllint.core.syntax import cpython_tree
    from trllint.semantic.project.outline import attributes_read_on_self, class_bases, classes_reading, spelled_dotted_names

    source = model.source

    def compute() -> bool:
        tree = cpython_tree(source)
        if tree is None:
            return source.path is not None
        view = project_view(model)
        if view is None:
            return False
        # Asked before the file is parsed: the dotted names its text spells whose first name an import
        # binds hold every call ``reaches`` could follow, so no file one leads on from is skipped.
        called: set[str] = set()
        if calls:
            called = model.once((spelled_dotted_names,), lambda: spelled_dotted_names(source.text, set(view.imports)))
        derived_from = classes_reading(tree, source.lines, reading) if subclasses and reading is not None else set()
        if view.reaches(tokens, called, class_bases(tree, source.lines, reading), derived_from):
            return True
        # Last, as it may list the whole project: a module that hands a keeper of a base something.
        read = attributes_read_on_self(source.text) if kept else set()
        return bool(read) and view.keeper_callers_spell(tokens, class_bases(tree, source.lines), read)

    return model.once((project_reaches, tokens, calls, reading, subclasses, kept), compute)


def consulted_modules(model: SemanticModel) -> dict[str, str]:
    """The project modules whose facts this file's answers read (path -> content hash), the
    folders whose list of modules they read (``MODULES_IN_FOLDER`` + folder -> its digest), and
    the projects whose every module they read (``PROJECT_MODULES`` + folder -> its modules'
    stamp, see ``ProjectView.modules_calling``); empty
    when no question reached the project (the view is not made just to ask)."""
    from trllint.semantic.project.index import MODULES_IN_FOLDER, PROJECT_MODULES

    view = model.cached((project_view,))
    if view is None:
        return {}
    folders = {f"{MODULES_IN_FOLDER}{folder}": digest for folder, digest in view.listings.items()}
    projects = {f"{PROJECT_MODULES}{folder}": stamp for folder, stamp in view.projects.items()}
    return {**{str(path): digest for path, digest in view.consulted.items()}, **folders, **projects}
