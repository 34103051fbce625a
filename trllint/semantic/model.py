"""The semantic model of one file: every fact several questions need, computed once, typed.

Rules ask the model instead of walking the tree by hand, and no rule keeps a string-keyed cache:
a fact is a member here (imports, rank flows, rank tests, accelerator names, wrapping, per-class
facts), or a rule's own fact computed once per file through :meth:`SemanticModel.once`.

Facts that span modules (a helper imported from another module of the project, a base class in
another file) come from the project index (``trllint.semantic.project.index``) through
:attr:`SemanticModel.project`: summaries of the modules this file imports, never of the paths
that happen to be linted with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar, cast

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, assigned_names, assignment_targets, call_name, dotted_name, matches
from trllint.core.source import SourceFile

if TYPE_CHECKING:
    from trllint.core.cst.parents import ParentMap
    from trllint.semantic.context import NodeContext

T = TypeVar("T")


def names_assigned_in(node: cst.CSTNode) -> set[str]:
    """Every name (``x``, ``self.x``) an assignment anywhere under ``node`` binds."""
    found = _DefinitionsAndCalls()
    walk.visit(node, found)
    return set(names_assigned_by(found.assignments))


def names_assigned_by(assignments: Iterable[cst.Assign | cst.AnnAssign]) -> frozenset[str]:
    """Every name (``x``, ``self.x``, ``self.model.config.x``) the assignments bind."""
    return frozenset(name for node in assignments for target in assignment_targets(node) for name in assigned_names(target))


@dataclass(frozen=True)
class Definitions:
    functions: tuple[cst.FunctionDef, ...]  # nested ones too, an outer one before its inner ones
    classes: tuple[cst.ClassDef, ...]
    class_of_method: dict[int, cst.ClassDef]  # id(method) -> the class whose body defines it

    def classes_by_name(self) -> dict[str, cst.ClassDef]:
        """The first class of each name (a later redefinition does not replace it)."""
        named: dict[str, cst.ClassDef] = {}
        for cls in self.classes:
            named.setdefault(cls.name.value, cls)
        return named


class _DefinitionsAndCalls(cst.CSTVisitor):
    """The file's functions, classes, calls and assignments, in one walk: nearly every whole-file
    check asks for the calls, and most for the definitions too."""

    def __init__(self) -> None:
        super().__init__()
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.class_of_method: dict[int, cst.ClassDef] = {}
        self.calls: list[cst.Call] = []
        # For each call (same index): the innermost def and the outermost class it sits in, its
        # decorators and defaults included (what walking its parents up would find).
        self.call_scopes: list[tuple[cst.FunctionDef | None, cst.ClassDef | None]] = []
        # id(def) -> the class it is a method of: the nearest def or class around it, if a class.
        self.method_class: dict[int, cst.ClassDef | None] = {}
        self.assignments: list[cst.Assign | cst.AnnAssign] = []
        # The innermost class around each assignment and each function (same index as
        # ``assignments`` and ``functions``), and around each class (by id): what a class holds.
        self.assignment_classes: list[cst.ClassDef | None] = []
        self.function_classes: list[cst.ClassDef | None] = []
        self.class_parents: dict[int, cst.ClassDef | None] = {}
        # id(def) -> the calls its body runs itself, in walk order: not those of its decorators
        # and defaults, nor those in a def, class or lambda inside it.
        self.body_calls: dict[int, list[cst.Call]] = {}
        # A name an import binds under another name -> the last names it binds it to
        # (`from accelerate.utils import gather as g`: g -> gather), imports in functions too.
        self.imported_as: dict[str, set[str]] = {}
        self._function: list[cst.FunctionDef | None] = [None]
        self._outermost_class: list[cst.ClassDef | None] = [None]
        self._innermost_class: list[cst.ClassDef | None] = [None]
        # The def, class or lambda whose own code the walk is in: [node, id of a def's body,
        # whether the walk is in that body yet] (a def's body comes after its header). A def or
        # a class never lies in a lambda: at one, the top is the nearest def or class.
        self._runner: list[list[Any]] = [[None, None, False]]

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        self.call_scopes.append((self._function[-1], self._outermost_class[-1]))
        runner, _, in_body = self._runner[-1]
        if in_body:
            self.body_calls.setdefault(id(runner), []).append(node)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            imported = dotted_name(node.name) or ""
            self.imported_as.setdefault(node.asname.name.value, set()).add(imported.rsplit(".", 1)[-1])

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_block(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_block(node)

    def _enter_block(self, node: cst.BaseSuite) -> None:
        runner = self._runner[-1]
        if runner[1] == id(node):
            runner[2] = True

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._runner.append([node, None, False])

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._runner.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assignments.append(node)
        self.assignment_classes.append(self._innermost_class[-1])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.assignments.append(node)
        self.assignment_classes.append(self._innermost_class[-1])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        self.function_classes.append(self._innermost_class[-1])
        scope = self._runner[-1][0]
        self.method_class[id(node)] = scope if type(scope) is cst.ClassDef else None
        self._function.append(node)
        self._runner.append([node, id(node.body), False])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._function.pop()
        self._runner.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)
        self.class_parents[id(node)] = self._innermost_class[-1]
        self._outermost_class.append(self._outermost_class[-1] or node)
        self._innermost_class.append(node)
        self._runner.append([node, None, False])
        if isinstance(node.body, cst.IndentedBlock):
            for statement in node.body.body:
                if isinstance(statement, cst.FunctionDef):
                    self.class_of_method[id(statement)] = node

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._outermost_class.pop()
        self._innermost_class.pop()
        self._runner.pop()


def imports_of(source: SourceFile) -> ImportMap:
    """The module's imports, computed once per file however many rules ask."""
    return SemanticModel.of(source).imports


class ClassFacts:
    """What the methods of one class assign, read once per class however many findings ask."""

    def __init__(self, cls: cst.ClassDef, imports: ImportMap, held: ClassContents | None = None) -> None:
        """``held``: the assignments and functions anywhere in the class, as the semantic model's
        walk found them (None: a class of another tree, walked here)."""
        self.cls = cls
        self._imports = imports
        self._held = held

    @cached_property
    def contents(self) -> ClassContents:
        """The assignments and functions anywhere in the class."""
        if self._held is not None:
            return self._held
        found = _DefinitionsAndCalls()
        walk.visit(self.cls, found)
        return ClassContents(found.assignments, found.functions)

    @cached_property
    def methods(self) -> dict[str, cst.FunctionDef]:
        """The class's methods by name: the last definition of a name, as Python binds it."""
        from trllint.semantic.context import methods_of

        return methods_of(self.cls)

    @cached_property
    def names_assigned(self) -> frozenset[str]:
        """Every name (``x``, ``self.x``, ``self.model.config.x``) an assignment in the class binds."""
        return names_assigned_by(self.contents.assignments)

    @cached_property
    def self_attributes(self) -> dict[str, bool]:
        """``self.x`` names assigned in the class's methods -> whether the value is an accelerator."""
        found: dict[str, bool] = {}
        for node in self.contents.assignments:
            if isinstance(node, cst.Assign):
                _bind_self_attributes(node, self._imports, found)
        if any(f.name.value == "accelerator" and f.decorators for f in self.contents.functions):
            found["self.accelerator"] = True  # @property def accelerator
        return found


def _bind_self_attributes(node: cst.Assign, imports: ImportMap, found: dict[str, bool]) -> None:
    """``found``'s ``self.x`` targets of ``node`` -> whether one of its assignments is an accelerator."""
    for target in node.targets:
        for name in assigned_names(target.target):
            if name.startswith("self.") and name.count(".") == 1:
                is_accelerator = isinstance(node.value, cst.Call) and matches(
                    imports.resolve(call_name(node.value)), "accelerate.Accelerator", "Accelerator"
                )
                found[name] = found.get(name, False) or is_accelerator


@dataclass
class ClassContents:
    """The assignments and functions anywhere in one class (its methods', nested classes' too),
    in the order a walk meets them."""

    assignments: list[cst.Assign | cst.AnnAssign] = field(default_factory=list)
    functions: list[cst.FunctionDef] = field(default_factory=list)


class SemanticModel:
    """Facts about one parsed file. ``SemanticModel.of(source)`` returns the file's one model."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self._classes: dict[int, ClassFacts] = {}
        self._identifiers: dict[int, frozenset[str]] = {}
        self._once: dict[tuple[Any, ...], Any] = {}

    @classmethod
    def of(cls, source: SourceFile) -> SemanticModel:
        model = source.model
        if not isinstance(model, SemanticModel):  # None until the first question about the file
            model = source.model = cls(source)
        return model

    def release(self) -> None:
        """Forget every fact (``SourceFile.release``); the model is not asked again. A fact that
        links its own objects in a cycle (a rank flow's pending bindings) unlinks them first."""
        for fact in self._once.values():
            release = getattr(fact, "release", None)
            if callable(release):
                release()
        self.__dict__.clear()

    # ---- this file ----------------------------------------------------------------------

    @cached_property
    def definitions(self) -> Definitions:
        """Every function and class of the file, in source order, and the class of each method."""
        found = self._walked
        return Definitions(tuple(found.functions), tuple(found.classes), found.class_of_method)

    @cached_property
    def calls(self) -> tuple[cst.Call, ...]:
        """The file's calls in the order a traversal meets them (an outer call before the calls
        in its arguments); ``trllint.facts.calls.calls_in`` is how rules ask."""
        return tuple(self._walked.calls)

    @cached_property
    def _call_scopes(self) -> dict[int, tuple[cst.FunctionDef | None, cst.ClassDef | None, cst.ClassDef | None]]:
        """id(call) -> (the innermost def holding it, the outermost class holding it, the class
        whose method that def is), for each of the file's calls, from the shared walk."""
        found = self._walked
        method_class = found.method_class
        return {
            id(call): (function, outermost, None if function is None else method_class[id(function)])
            for call, (function, outermost) in zip(found.calls, found.call_scopes)
        }

    def _holders_of_call(self, call: cst.Call) -> tuple[cst.FunctionDef | None, cst.ClassDef | None] | None:
        scope = self._call_scopes.get(id(call))
        return None if scope is None else (scope[0], scope[2])

    def outermost_class_holding(self, call: cst.Call) -> cst.ClassDef | None:
        """The outermost class that holds one of the file's calls (``calls``), or None."""
        return self._call_scopes[id(call)][1]

    def calls_in_body(self, function: cst.FunctionDef) -> tuple[cst.Call, ...] | None:
        """The calls ``function``'s body runs itself, in walk order: not those of its decorators
        and defaults, nor those in a def, class or lambda inside it (they run when that is
        called). None for a function this file's walk did not meet."""
        found = self._walked
        if id(function) not in found.method_class:
            return None
        return tuple(found.body_calls.get(id(function), ()))

    @cached_property
    def assignments(self) -> tuple[cst.Assign | cst.AnnAssign, ...]:
        """The file's assignments (``x = ...``, ``x: T = ...``) in every scope, in the order a
        traversal meets them."""
        return tuple(self._walked.assignments)

    @cached_property
    def _walked(self) -> _DefinitionsAndCalls:
        found = _DefinitionsAndCalls()
        walk.visit(self.source.module, found)
        return found

    @cached_property
    def imported_as(self) -> dict[str, frozenset[str]]:
        """Each name an import anywhere in the file binds under another name, and the last names
        it binds it to: ``g`` for ``from accelerate.utils import gather as g`` is ``gather``."""
        return {name: frozenset(names) for name, names in self._walked.imported_as.items()}

    @cached_property
    def dotted_calls(self) -> frozenset[str]:
        """The whole dotted name of each call whose callee is a name or a chain of attributes on
        one (``helper``, ``utils.helper``, ``self.m``): where a call leads in the project."""
        return frozenset(name for name in map(dotted_name, (call.func for call in self.calls)) if name is not None)

    @cached_property
    def imports(self) -> ImportMap:
        return ImportMap.of(self.source.module)

    def identifiers(self, node: cst.CSTNode) -> frozenset[str]:
        """``walk.identifiers(node)`` (every name and attribute name in it), once per node of the
        file however many facts ask: the rank facts and TRL004 both ask it of every function."""
        found = self._identifiers.get(id(node))
        if found is None:
            found = self._identifiers[id(node)] = walk.identifiers(node)
        return found

    def class_facts(self, cls: cst.ClassDef) -> ClassFacts:
        if id(cls) not in self._classes:
            self._classes[id(cls)] = ClassFacts(cls, self.imports, self._class_contents.get(id(cls)))
        return self._classes[id(cls)]

    @cached_property
    def _class_contents(self) -> dict[int, ClassContents]:
        """id(class) -> what it holds, for every class of the file, from the shared walk (a class
        of another tree is not here: its facts walk it)."""
        found = self._walked
        contents = {id(cls): ClassContents() for cls in found.classes}

        def around(cls: cst.ClassDef | None) -> Iterator[ClassContents]:
            while cls is not None:
                yield contents[id(cls)]
                cls = found.class_parents[id(cls)]

        for node, cls in zip(found.assignments, found.assignment_classes):
            for held in around(cls):
                held.assignments.append(node)
        for function, cls in zip(found.functions, found.function_classes):
            for held in around(cls):
                held.functions.append(function)
        return contents

    def once(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()``, once per file for ``key``: a shared fact (``trllint.facts``) or one rule's
        own. The key starts with the function that defines the fact (``(rank_flows,)``,
        ``(summarise_sinks, settings)``), so two facts cannot collide and the cache is not keyed by
        strings. The model itself knows no fact: facts are asked of it, never the other way."""
        if key not in self._once:
            self._once[key] = compute()
        return cast(T, self._once[key])  # the key's first item, the fact's function, fixes T

    # ---- where a node sits ---------------------------------------------------------------

    @cached_property
    def parents(self) -> ParentMap:
        """Each node's parent; the same map the rules' ParentProvider answers from."""
        from trllint.core.cst.parents import parent_map

        return parent_map(self.source.module)

    @cached_property
    def context(self) -> NodeContext:
        from trllint.semantic.context import NodeContext

        return NodeContext(None, self.source, parent_map=lambda: self.parents.get, call_holders=self._holders_of_call)

    def cached(self, key: tuple[Any, ...]) -> Any | None:
        """What :meth:`once` holds for ``key``, or None when no question asked it yet."""
        return self._once.get(key)
