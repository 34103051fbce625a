"""Where a node sits: its function, its class, and whether that class is a Trainer. Which
accelerator a fix may call there is ``trllint.facts.accelerators.accelerator_at``.

Built on parent links (``trllint.core.cst.parents``, LibCST's ParentNodeProvider without its
cost) instead of the scope and qualified-name providers, which cost several times the parse.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

import libcst as cst

from trllint.core.cst.names import dotted_name
from trllint.core.cst.parents import ParentProvider
from trllint.core.cst.walk import path_to_definition, syntax_children
from trllint.core.source import SourceFile

# Metadata a rule must declare to use this module.
CONTEXT_METADATA = (ParentProvider,)
# node -> its parent (None for the root)
ParentOf = Callable[[cst.CSTNode], "cst.CSTNode | None"]

DEFAULT_STEP_METHODS = ("training_step", "compute_loss", "prediction_step", "evaluation_step")


class NodeContext:
    """Answers "where is this node?" for one file: ``model.context``, built on the file's one
    parent map (the same map a rule's ParentProvider answers from), made on the first question
    that needs it; the function and class around a call come from the model's walk instead."""

    def __init__(
        self,
        parent_of: ParentOf | None,
        source: SourceFile,
        *,
        parent_map: Callable[[], ParentOf] | None = None,
        call_holders: Callable[[cst.Call], tuple[cst.FunctionDef | None, cst.ClassDef | None] | None] | None = None,
    ) -> None:
        """``parent_of`` answers each question; or, where it is None, ``parent_map()`` builds it on
        the first question (rules take the context before they visit, and on most files none of
        them asks one: the map costs a walk of the whole tree). ``call_holders(call)``: the
        function and the method's class around one of the file's calls, as the semantic model's
        walk found them (None for a call it did not walk): most questions are about a call."""
        self._parent_of = parent_of
        self._parent_map = parent_map
        self._call_holders = call_holders
        self.source = source
        # Before the file's map is built: id(node) -> parent for the functions around the calls
        # asked about so far, and for the statements above each function (``_function_links``).
        self._local: dict[int, cst.CSTNode] = {}
        self._linked_functions: set[int] = set()

    def _parents(self) -> ParentOf:
        parent_of = self._parent_of
        if parent_of is None:
            assert self._parent_map is not None, "NodeContext needs parent_of or parent_map"
            parent_of = self._parent_of = self._parent_map()
        return parent_of

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        if self._parent_of is None:
            # Most questions walk up from one of the file's calls (its statement, the ifs around
            # it) and stop at its function: the links of that function, and of the statements
            # above it, answer them without a map of the whole file.
            found = self._local.get(id(node))
            if found is None:
                if node is self.source.module:
                    return None
                held = self._held_call(node)
                if held is not None and held[0] is not None and self._function_links(held[0]):
                    found = self._local.get(id(node))
            if found is not None:
                return found
        return self._parents()(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def _function_links(self, function: cst.FunctionDef) -> bool:
        """Link every syntax node of ``function`` to its parent, and the function and each
        statement or block above it up to the module (a ``def`` lies only in those, never in an
        expression); the same links as the file's map. False when the function is not found
        under the module (then the file's map answers)."""
        if id(function) in self._linked_functions:
            return True
        above = path_to_definition(self.source.module, function)
        if above is None:
            return False
        self._linked_functions.add(id(function))
        links = self._local
        for parent, child in zip(above, above[1:] + [function]):
            links[id(child)] = parent
        pending: list[cst.CSTNode] = [function]
        while pending:
            current = pending.pop()
            for child in syntax_children(current):
                links[id(child)] = current
                pending.append(child)
        return True

    def _held_call(self, node: cst.CSTNode) -> tuple[cst.FunctionDef | None, cst.ClassDef | None] | None:
        if self._call_holders is None or type(node) is not cst.Call:
            return None
        return self._call_holders(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        held = self._held_call(node)
        if held is not None:
            return held[0]
        for ancestor in self.ancestors(node):
            if type(ancestor) is cst.FunctionDef:  # a leaf class (trllint.core.cst.walk.node_types)
                return ancestor
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class whose method (directly) holds ``node``."""
        held = self._held_call(node)
        if held is not None:
            return held[1]
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
                return ancestor
        return None


def is_trainer_class(cls: cst.ClassDef) -> bool:
    """A subclass of transformers' Trainer or one of TRL's (DPOTrainer, GRPOTrainer, ...)."""
    for base in cls.bases:
        name = dotted_name(base.value)
        if name and name.rsplit(".", 1)[-1].endswith("Trainer"):
            return True
    return False


def step_methods(settings: Mapping[str, Any]) -> tuple[str, ...]:
    extra = tuple(settings.get("training-step-methods", ()))
    return DEFAULT_STEP_METHODS + extra


def methods_of(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    if not isinstance(cls.body, cst.IndentedBlock):
        return {}
    return {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}


