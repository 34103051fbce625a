"""The wrapped ``self`` attributes a class has before its own code binds any: what a library
trainer base (TRL's ``PPOTrainer``) prepared, what a base class of this file or of another
module of the project wrapped or keeps from a method some module hands a wrapped model, and what
a subclass beside the file wrapped. The binding pass asks it as it enters each method."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

import libcst as cst

from trllint.core.cst.names import ImportMap, call_name, dotted_name
from trllint.facts.wrapping import Wrapping
from trllint.rules.trl001_wrapped_model_attribute.library_bases import LibraryBase, library_base

if TYPE_CHECKING:
    from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import ProjectBases

# The names (``x``, ``self.x``) assignments in a class bind: the model's ClassFacts, read once per class.
ClassNames = Callable[[cst.ClassDef], frozenset[str]]

# A same-file base chain longer than this is not followed further (cycles end anyway).
_MAX_LOCAL_BASES = 16


def _from_project(attribute: list[Any], owner: str) -> Wrapping:
    """A wrapped attribute as ``SELF_ATTRIBUTES`` lists it, bound by the class ``owner``."""
    kind, origin, accelerator, conditional = attribute
    return Wrapping(kind, f"{origin} in {owner}", accelerator, bool(conditional), other_module=True)


class InheritedWrappings:
    def __init__(
        self,
        imports: ImportMap,
        classes: dict[str, cst.ClassDef],
        bases: ProjectBases,
        class_names: ClassNames,
        self_attributes: dict[int, dict[str, Wrapping]],
        inherited: dict[int, dict[str, Wrapping]],
    ) -> None:
        self.imports = imports
        self.module_classes = classes
        self.project_bases = bases
        self.class_names = class_names
        self.self_attributes = self_attributes  # id(class) -> what its own methods bind wrapped (the pass fills it)
        self.inherited = inherited  # id(class) -> what it inherits, as last answered
        self._bound: dict[int, frozenset[str]] = {}
        self._libraries: dict[int, LibraryBase | None] = {}  # id(class) -> its library trainer base

    def library_base(self, cls: cst.ClassDef) -> LibraryBase | None:
        if id(cls) not in self._libraries:
            self._libraries[id(cls)] = library_base(cls, self.imports)
        return self._libraries[id(cls)]

    def from_library(self, cls: cst.ClassDef) -> dict[str, Wrapping]:
        """The attributes a library trainer base prepared, that the class's own code does not bind."""
        library = self.library_base(cls)
        if library is None:
            return {}
        bound = self.bound_by(cls)
        return {name: wrapping for name, wrapping in library.attributes.items() if name not in bound}

    def calls_library_init(self, call: cst.Call, cls: cst.ClassDef) -> bool:
        """``PPOTrainer.__init__(self, ...)``: the library base's ``__init__`` named directly."""
        library = self.library_base(cls)
        return library is not None and call_name(call) == f"{library.name}.__init__"

    def of(self, cls: cst.ClassDef) -> dict[str, Wrapping]:
        """The wrapped ``self`` attributes ``cls`` inherits: bound wrapped by a base class (of this
        file, or of another module of the project), nearest first, and bound by neither the class
        itself nor a nearer base (``self.model = model`` after ``super().__init__()`` ends it)."""
        found: dict[str, Wrapping] = {}
        bound = set(self.bound_by(cls))

        def take(wrapped: dict[str, Wrapping], binds: Iterable[str]) -> None:
            for name, wrapping in wrapped.items():
                if name not in bound:
                    found.setdefault(name, wrapping)
            bound.update(binds)

        chain, seen = [cls], {id(cls)}
        reads = self.project_bases.reads(cls)
        for current in chain:
            for base in current.bases:
                local = self.module_classes.get(dotted_name(base.value) or "")
                if local is not None and id(local) not in seen and len(chain) < _MAX_LOCAL_BASES:
                    seen.add(id(local))
                    chain.append(local)
                    wrapped = self.self_attributes.get(id(local), {})
                    owner = local.name.value
                    take({n: replace(w, origin=f"{w.origin} in {owner}") for n, w in wrapped.items()}, self.bound_by(local))
            for owner, entry in self.project_bases.of(current) if reads else ():
                wrapped = {n: _from_project(w, owner) for n, w in entry.get("wrapped", {}).items()}
                take(wrapped, entry.get("bound", ()))
        self.inherited[id(cls)] = found
        return found

    def kept_at(self, cls: cst.ClassDef, method: str) -> dict[str, Wrapping]:
        """What a base in another module keeps from a method's argument, handed a wrapped model
        somewhere in the project (``ProjectBases.kept``), at the entry of ``method``: not
        ``__init__``, which runs before anything is handed on, nor a method the bases run while
        they set the attribute up."""
        if method == "__init__":
            return {}
        return {
            name: wrapping
            for name, (wrapping, setting_up) in self.project_bases.kept(cls).items()
            if method not in setting_up
        }

    def from_subclasses(self, cls: cst.ClassDef, method: str) -> dict[str, Wrapping]:
        """The ``self`` attributes that a class derived from ``cls`` beside its file binds wrapped
        and does not override ``method`` of: ``cls``'s ``method`` runs on such an instance too,
        after the subclass wrapped them (trlx's ``AccelerateRLModel.act`` reads
        ``self.model.generate`` on the model its PPO and ILQL subclasses prepare). Asked at the
        entry of every method but ``__init__``, which runs before any method of the subclass; the
        class's own and its bases' bindings come after. Only a class at the top of the file has
        subclasses elsewhere."""
        found: dict[str, Wrapping] = {}
        if self.module_classes.get(cls.name.value) is not cls:
            return found
        for subclass, entry in self.project_bases.subclasses(cls):
            if method in subclass.methods:
                continue  # the subclass's instances run its own method instead
            for name, wrapping in entry.get("wrapped", {}).items():
                found.setdefault(name, _from_project(wrapping, subclass.name))
        return found

    def bound_by(self, cls: cst.ClassDef) -> frozenset[str]:
        """The ``self.<name>`` attributes the class's own code binds, wrapped or not."""
        bound = self._bound.get(id(cls))
        if bound is None:
            names = self.class_names(cls)
            bound = self._bound[id(cls)] = frozenset(n for n in names if n.startswith("self.") and n.count(".") == 1)
        return bound
