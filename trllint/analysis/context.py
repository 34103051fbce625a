"""Where a node sits: its function, its class, whether that class is a Trainer, and which
accelerator (if any) a fix can call.

Built on parent links (``trllint.analysis.parents``, LibCST's ParentNodeProvider without its
cost) instead of the scope and qualified-name providers, which cost several times the parse.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import libcst as cst

from trllint.analysis import walk
from trllint.analysis.names import ImportMap, assigned_names, call_name, dotted_name, matches
from trllint.analysis.parents import ParentProvider
from trllint.source import SourceFile

# Metadata a rule must declare to use this module.
CONTEXT_METADATA = (ParentProvider,)

DEFAULT_STEP_METHODS = ("training_step", "compute_loss", "prediction_step", "evaluation_step")


def imports_of(source: SourceFile) -> ImportMap:
    """The module's imports, computed once per file however many rules ask."""
    imports = source.facts.get("imports")
    if imports is None:
        imports = source.facts["imports"] = ImportMap.of(source.module)
    return imports


class NodeContext:
    """Answers "where is this node?" for one rule instance (``rule.get_metadata`` underneath)."""

    def __init__(self, parent_of: Callable[[cst.CSTNode], cst.CSTNode | None], source: SourceFile) -> None:
        self._parent_of = parent_of
        self.source = source

    @classmethod
    def of(cls, rule) -> NodeContext:
        return cls(lambda node: rule.get_metadata(ParentProvider, node, None), rule.source)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self._parent_of(node)
        while parent is not None:
            yield parent
            parent = self._parent_of(parent)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent_of(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class whose method (directly) holds ``node``."""
        function = self.enclosing_function(node)
        if function is None:
            return None
        for ancestor in self.ancestors(function):
            if isinstance(ancestor, cst.ClassDef):
                return ancestor
            if isinstance(ancestor, cst.FunctionDef):
                return None  # a nested function: not a method
        return None

    def enclosing_statement(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        for ancestor in [node, *self.ancestors(node)]:
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return ancestor  # type: ignore[return-value]
        return None

    def accelerator_in_scope(self, node: cst.CSTNode) -> str | None:
        """The expression a fix can use for the run's Accelerator at ``node``, or None.

        ``self.accelerator`` inside a Trainer subclass (the Trainer sets it up) or a class that
        assigns it; else a name bound to ``Accelerator(...)`` in the enclosing function or module.
        """
        cls = self.enclosing_class(node)
        if cls is not None and (is_trainer_class(cls) or self._scope_fact(cls, _assigns_self_accelerator)):
            return "self.accelerator"
        function = self.enclosing_function(node)
        scopes: list[cst.CSTNode] = [function] if function is not None else []
        scopes.append(self.source.module)
        for scope in scopes:
            name = self._scope_fact(scope, self._accelerator_bound_in)
            if name is not None:
                return name
        return None

    def _scope_fact(self, scope: cst.CSTNode, compute: Callable[[cst.CSTNode], Any]) -> Any:
        # Once per scope and file: asked at every finding, a class-wide walk per finding would
        # grow with (findings x class size).
        facts = self.source.facts.setdefault("accelerator_scopes", {})
        key = (id(scope), compute.__name__)
        if key not in facts:
            facts[key] = compute(scope)
        return facts[key]

    def _accelerator_bound_in(self, scope: cst.CSTNode) -> str | None:
        return _name_bound_to_call(scope, imports_of(self.source), "accelerate.Accelerator", "Accelerator")


def is_trainer_class(cls: cst.ClassDef) -> bool:
    """A subclass of transformers' Trainer or one of TRL's (DPOTrainer, GRPOTrainer, ...)."""
    for base in cls.bases:
        name = dotted_name(base.value)
        if name and name.rsplit(".", 1)[-1].endswith("Trainer"):
            return True
    return False


def step_methods(settings: dict) -> tuple[str, ...]:
    extra = tuple(settings.get("training-step-methods", ()))
    return DEFAULT_STEP_METHODS + extra


def methods_of(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    if not isinstance(cls.body, cst.IndentedBlock):
        return {}
    return {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}


def _assigns_self_accelerator(cls: cst.ClassDef) -> bool:
    return _assigns_self_attribute(cls, "accelerator")


def _assigns_self_attribute(cls: cst.ClassDef, attribute: str) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            for target in node.targets:
                if f"self.{attribute}" in assigned_names(target.target):
                    found = True

    walk.visit(cls, Finder())
    return found


def _name_bound_to_call(scope: cst.CSTNode, imports: ImportMap, *callees: str) -> str | None:
    """A plain name assigned from a call to one of ``callees`` directly in ``scope``'s body."""
    body = getattr(scope, "body", None)
    statements = body.body if isinstance(body, cst.IndentedBlock) else body
    if not isinstance(statements, (list, tuple)):
        return None
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(small.value, cst.Call):
                if matches(imports.resolve(call_name(small.value)), *callees):
                    targets = small.targets if isinstance(small, cst.Assign) else [small]
                    for target in targets:
                        if isinstance(target.target, cst.Name):
                            return target.target.value
    return None
