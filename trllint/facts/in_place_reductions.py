"""What collectives reduce in place: which functions reduce an argument across ranks (``def
all_reduce_mean(t): dist.all_reduce(t); t /= world_size`` leaves the caller's ``t`` global), and
what a block of statements reduces (a loop's body).

The rank flows read a call of such a function (of this file, or of another module of the project
through ``REDUCES_IN_PLACE``) as making its argument global.
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, assigned_names, dotted_name
from trllint.core.prefilter import AllOf, AnyOf
from trllint.facts.rank_lattice import IN_PLACE_COLLECTIVES, Rank, written_tensor
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.summaries import ModuleFact


def reduced_in_block(
    block: cst.BaseSuite,
    imports: ImportMap,
    reduced_by_call: Callable[[cst.Call], list[str]],
    state_at: Callable[[cst.BaseExpression, cst.CSTNode], Rank],
) -> set[str]:
    """What the block's own statements leave reduced, in their order, as ``reduced_name`` spells
    it: reduced in place by a collective or by a call that does (``reduced_by_call``: a helper,
    an object's syncing method), ``t`` for ``dist.all_reduce(t)``, ``sums[key]`` for
    ``dist.all_reduce(sums[key].detach())``; or an element replaced by a value the same on every
    rank (``state_at``, read in its statement): ``losses[name] = reduce_dict(losses[name])``. A
    later statement that writes this rank's data into an element undoes it."""
    found: set[str] = set()
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for line in lines:
        for small in getattr(line, "body", ()) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ():
            written = _written_element(small)
            if written is not None:
                element, value = written
                state = state_at(value, line)
                if state == Rank.GLOBAL and isinstance(small, cst.Assign):
                    found.add(element)
                elif state == Rank.PER_RANK or isinstance(small, cst.Assign):
                    found.discard(element)  # `sums[k] /= world_size` keeps it; `/= local_count` does not
            for call in expression_statement_calls(small):
                found.update(reduced_by_call(call))
                tensor = written_tensor(call, imports)
                name = reduced_name(tensor) if tensor is not None else None
                if name is not None:
                    found.add(name)
    return found


def _written_element(small: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    """The element ``small`` assigns (``d[k] = v``, ``d[k] /= n``) and the value it assigns."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
    elif isinstance(small, cst.AugAssign):
        target = small.target
    else:
        return None
    element = element_name(target)
    return (element, small.value) if element is not None else None


def skips_some_turn(body: cst.BaseSuite) -> bool:
    """A ``continue`` or ``break`` of the loop whose body this is (not of a loop or a function
    inside it): some turn may leave before the body's reductions."""
    found = False

    class Exits(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            found = found or isinstance(node, (cst.Continue, cst.Break))
            return not isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef))

    body.visit(Exits())
    return found


def expression_statement_calls(small: cst.BaseSmallStatement) -> list[cst.Call]:
    """The calls an expression statement makes for their effect: ``f(x)``, and each call of a
    tuple of them (``dist.all_reduce(a), dist.all_reduce(b)``)."""
    if not isinstance(small, cst.Expr):
        return []
    value = small.value
    if isinstance(value, cst.Call):
        return [value]
    if isinstance(value, cst.Tuple):
        return [element.value for element in value.elements if isinstance(element.value, cst.Call)]
    return []


def reduced_name(written: cst.BaseExpression) -> str | None:
    """The name under which what a collective writes in place is bound: ``t``, ``self.loss``, or
    an element of a container (``element_name``)."""
    return dotted_name(written) or element_name(written)


def element_name(node: cst.BaseExpression) -> str | None:
    """``logs[key]`` for a subscript of a dotted name by one dotted name, else None."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    container = dotted_name(node.value)
    key = dotted_name(index.value) if isinstance(index, cst.Index) else None
    return spelled_element(container, key) if container is not None and key is not None else None


def spelled_element(container: str | None, key: str) -> str:
    """How ``element_name`` spells element ``key`` of ``container``."""
    return f"{container}[{key}]"


def reduced_parameters(function: cst.FunctionDef, imports: ImportMap) -> list[int]:
    """The positions of the parameters ``function`` reduces in place across ranks
    (``def all_reduce_mean(t): dist.all_reduce(t); t /= world_size``): each is handed to an
    in-place torch.distributed collective in the function's own statements and never rebound
    there (after ``t = t.clone()`` the collective reduces a copy the caller never sees; ``t /= n``
    divides the same tensor)."""
    positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if not positional:
        return []
    body = _ReducedInBody(function, imports)
    walk.visit(function, body)
    return [i for i, name in enumerate(positional) if name in body.outputs and name not in body.rebound]


class _ReducedInBody(cst.CSTVisitor):
    """What one function's own statements rebind, and hand to an in-place collective. A class of
    the module, not one made per call: a class is a reference cycle, which would keep the
    function's tree alive until the collector runs, and the walk works out a class's hooks once."""

    def __init__(self, function: cst.FunctionDef, imports: ImportMap) -> None:
        super().__init__()
        self.function = function
        self.imports = imports
        self.rebound: set[str] = set()
        self.outputs: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function  # a nested function runs when called, not here

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.rebound.update(assigned_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.rebound.update(assigned_names(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        written = written_tensor(node, self.imports)
        name = reduced_name(written) if written is not None else None
        if name is not None:
            self.outputs.add(name)


def _reduces_in_place(model: SemanticModel) -> dict[str, list[int]]:
    """``f`` -> the positions of the parameters the module's function ``f`` reduces in place."""
    answer: dict[str, list[int]] = {}
    for statement in model.source.module.body:
        if isinstance(statement, cst.FunctionDef):
            positions = reduced_parameters(statement, model.imports)
            if positions:
                answer[statement.name.value] = positions
            else:
                answer.pop(statement.name.value, None)  # a later definition of the name wins
    return answer


# Which functions of a module all-reduce (or broadcast) an argument in place, and which.
REDUCES_IN_PLACE = ModuleFact(
    "rank-flow.reduces-in-place", 2, _reduces_in_place, calls=frozenset(IN_PLACE_COLLECTIVES)
)
# What a module must spell to reduce an argument in place: the collective's name, however it is
# imported, and a way to reach torch.distributed, since a collective counts only when its full
# name starts with `torch.distributed.` or `dist.`: `torch.distributed` itself, the module
# imported as `distributed` and read (`distributed.all_reduce`) or renamed (`distributed as d`), or
# a name `dist` read (`dist.all_reduce`), renamed (`import dist as d`) or imported from (`from
# dist import x`). A module that misses either part is not parsed for REDUCES_IN_PLACE (its answer
# is {}): "gather" in `asyncio.gather` or a comment, and "distributed" in another, are not enough.
NAMES_AN_IN_PLACE_COLLECTIVE = AllOf(
    AnyOf(*IN_PLACE_COLLECTIVES),
    AnyOf(
        re.compile(r"torch[\s\\]*\.[\s\\]*distributed"),
        # `\b` written as a look-behind after the word, so that `re` scans for the literal
        # (trllint.facts.markers): thirty times faster on a 6,000-line module.
        re.compile(r"distributed(?<!\wdistributed)[\s\\]*(?:\.|as\b)"),
        re.compile(r"dist(?<!\wdist)[\s\\]*(?:\.|as\b|import\b)"),
    ),
)
