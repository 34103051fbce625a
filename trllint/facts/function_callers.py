"""What one walk of a file shows of its functions' callers: the calls by the name they call,
the functions handed on as values (callers the file does not show), the names relative imports
bind, and the ``self`` attributes it assigns. The rank flows read a function's parameters as what
its callers pass (``FileRankFlows.passed_to``), and a call as unknown or known by these.
"""

from __future__ import annotations

import libcst as cst

from dataclasses import dataclass
from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names, dotted_name
from trllint.facts.rank_lattice import method_or_function


@dataclass(frozen=True)
class FunctionCallers:
    relative_imports: frozenset[str]  # the names `from .utils import helper` binds
    self_attributes: frozenset[str]  # the `self.x` names assigned anywhere (`self.model = model`)
    calls_by_name: dict[str, list[cst.Call]]  # `f(...)`, `self.f(...)` by `f`
    handed_on: frozenset[str]  # functions read as a value: callers the file does not all show


def function_callers(module: cst.Module, functions: frozenset[str], methods: frozenset[str]) -> FunctionCallers:
    """In one walk of the file: the names ``from .utils import helper`` binds (another module of
    the same project), the ``self.x`` names assigned anywhere (``self.model = model``), the
    calls by the name they call (``f(...)``, ``self.f(...)``), and the names of ``functions``
    read as a value (``Trainer(compute_metrics=log_metrics)``, ``map(self.summarize, batches)``):
    functions whose callers the file does not all show. Not read as a value: a callee, a
    definition's, a parameter's or a keyword argument's name, a name assigned to, and an
    attribute of anything but ``self`` or ``cls`` unless a method has its name (``args.default``
    is no function ``default`` of this file). ``methods``: the names of ``functions`` some
    class defines."""
    facts = _CallersWalk(functions, methods)
    walk.visit(module, facts)
    return FunctionCallers(frozenset(facts.relative), frozenset(facts.assigned), facts.calls, frozenset(facts.handed_on))


class _CallersWalk(cst.CSTVisitor):
    """``function_callers``' walk. A class of the module, not one made per call: that is a reference
    cycle, which would hold the file's calls (and their trees) until the collector runs."""

    def __init__(self, functions: frozenset[str], methods: frozenset[str]) -> None:
        super().__init__()
        self.functions = functions
        self.methods = methods
        self.relative: set[str] = set()
        self.assigned: set[str] = set()
        self.calls: dict[str, list[cst.Call]] = {}
        self.handed_on: set[str] = set()
        self.not_a_value: set[int] = set()  # callees and definitions' names: the ids of their Name nodes

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.relative.add(dotted_name(alias.asname.name if alias.asname else alias.name) or "")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.assigned.update(n for n in assigned_names(target.target) if n.startswith("self."))
            self._not_values(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.assigned.update(n for n in assigned_names(node.target) if n.startswith("self."))
        self._not_values(node.target)

    def _not_values(self, target: cst.BaseExpression) -> None:
        """The names an assignment binds (``x = ...``, ``a, *b = ...``) are not read."""
        if isinstance(target, cst.Name):
            self.not_a_value.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._not_values(element.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_a_value.add(id(node.keyword))

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> None:  # `case Event(step=1)`
        self.not_a_value.add(id(node.key))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_a_value.add(id(node.name))

    def visit_TypeVar(self, node: cst.TypeVar) -> None:  # `def f[T = int]()` binds T
        self.not_a_value.add(id(node.name))

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:  # `type Batch = dict` binds Batch
        self.not_a_value.add(id(node.name))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # `dotted_name(node.value) in ("self", "cls")`, without spelling out every receiver.
        receiver = node.value
        if node.attr.value not in self.methods and not (type(receiver) is cst.Name and receiver.value in ("self", "cls")):
            self.not_a_value.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        name = method_or_function(node)
        if name is not None:
            self.calls.setdefault(name, []).append(node)
        self.not_a_value.add(id(node.func.attr if isinstance(node.func, cst.Attribute) else node.func))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.not_a_value.add(id(node.name))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.functions and id(node) not in self.not_a_value:
            self.handed_on.add(node.value)
