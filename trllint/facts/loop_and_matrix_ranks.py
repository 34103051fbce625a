"""Names spelled like a rank that hold no process's rank: a matrix rank (LoRA's ``r``, a layer's
``rank``) and a loop over every rank (``for rank in range(world_size):``). The rank facts
(``trllint.facts.ranks.RankFacts``) read neither as this process's rank.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names, dotted_name, last_attribute, parameter_names, scope_bindings
from trllint.facts.rank_reads import RANK_INDEXES, integer_constants

# Uses that make a rank-named value a matrix rank (LoRA's `r`), not this process's rank: a layer
# or tensor dimension (`nn.Linear(in_features, rank)`, `torch.zeros(rank, out)`), the divisor of a
# LoRA alpha (`alpha / rank`), or the `r=` of a LoRA config. A process's rank picks a device, a
# shard, a seed or rank 0's work; it never sizes a weight.
_LOW_RANK_SHAPES = frozenset({"Linear", "Embedding", "zeros", "ones", "randn", "rand", "empty"})
_LOW_RANK_KEYWORDS = frozenset({"r", "lora_r", "lora_rank"})


def matrix_ranks(functions: list[cst.FunctionDef]) -> tuple[set[str], set[int]]:
    """The rank-named values each function uses as a matrix rank (``_LOW_RANK_SHAPES``), with
    the names assigned from them or to them there (``self.rank = rank``, ``r = config.rank``),
    and parameters named like a rank with a positive default (``rank=4``: no process's rank
    has one): the attributes by dotted name, file-wide (``self.rank``, ``config.rank``), and the
    ids of the ``Name`` nodes of each function's own names (``rank``, ``r``)."""
    attributes: set[str] = set()
    nodes: set[int] = set()
    for function in functions:
        used, links = _matrix_rank_uses(function)
        if not used:
            continue
        for _ in range(2):  # `self.rank = rank` then `nn.Linear(d, self.rank)`: both ways
            for target, value in links:
                if target in used or value in used:
                    used |= {target, value}
        attributes.update(name for name in used if "." in name)
        nodes |= _name_nodes(function, {name for name in used if "." not in name})
    return attributes, nodes


def loop_rank_nodes(statements: list[cst.CSTNode], functions: list[cst.FunctionDef]) -> set[int]:
    """The ids of the ``Name`` nodes that read or bind a rank-named name a function binds only as
    a ``for`` statement's target (closures included): every process runs every iteration, so it
    is no process's rank."""
    found: set[int] = set()
    # Such a name is a `for` target in its function's own body: without a rank-named target
    # in the file, no function need be read.
    if not any(map(_is_rank_loop, statements)):
        return found
    for function in functions:
        if not any(map(_is_rank_loop, walk.statements(function.body, into_definitions=False))):
            continue  # asked first: reading every binding of a long function is the cost
        loop_only = _loop_only_names(function) & RANK_INDEXES
        if loop_only:
            found |= _name_nodes(function.body, loop_only)
    return found


def _matrix_rank_uses(function: cst.FunctionDef) -> tuple[set[str], list[tuple[str, str]]]:
    """The dotted names ``function`` uses as a matrix rank (a dimension, a LoRA divisor or ``r=``),
    and the plain assignments (target, value) between dotted names in it."""
    used: set[str] = set()
    links: list[tuple[str, str]] = []
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        default = integer_constants(param.default) if param.default is not None else None
        if param.name.value in RANK_INDEXES and default is not None and len(default) == 1 and default[0] > 0:
            used.add(param.name.value)

    uses = _MatrixRankUses(used, links)
    walk.visit(function, uses)
    return used, links


class _MatrixRankUses(cst.CSTVisitor):
    """Adds to ``used`` the names a function uses as a matrix rank, and to ``links`` its plain
    assignments between dotted names. (A class of the module, not one made per call: that would
    be a reference cycle holding what it read until the collector runs.)"""

    def __init__(self, used: set[str], links: list[tuple[str, str]]) -> None:
        super().__init__()
        self.used = used
        self.links = links

    def matrix_rank(self, expr: cst.BaseExpression) -> None:
        # Any name: `nn.Linear(d, r)` makes `r` a matrix rank, and `r = config.rank` its source.
        if isinstance(expr, cst.Call) and dotted_name(expr.func) == "int" and len(expr.args) == 1:
            expr = expr.args[0].value
        name = dotted_name(expr)
        if name is not None:
            self.used.add(name)

    def visit_Call(self, node: cst.Call) -> None:
        if last_attribute(dotted_name(node.func)) in _LOW_RANK_SHAPES:
            for arg in node.args:
                if arg.keyword is None:
                    self.matrix_rank(arg.value)
                    for element in arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else ():
                        self.matrix_rank(element.value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _LOW_RANK_KEYWORDS:
                self.matrix_rank(arg.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide) and any("alpha" in n for n in walk.identifiers(node.left)):
            self.matrix_rank(node.right)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value.args[0].value if (
            isinstance(node.value, cst.Call) and dotted_name(node.value.func) == "int" and len(node.value.args) == 1
        ) else node.value
        source = dotted_name(value)
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and source is not None:
                self.links.append((name, source))


def _name_nodes(node: cst.CSTNode, names: set[str]) -> set[int]:
    """The ids of the ``Name`` nodes in ``node`` that read or bind one of ``names``."""
    found: set[int] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if name.value in names:
                found.add(id(name))

    if names:
        walk.visit(node, Names())
    return found


def _is_rank_loop(statement: cst.CSTNode) -> bool:
    """``for rank in ...``: a ``for`` statement with a rank-named target. A function none of whose
    own statements is one binds none of its rank-named names by loops alone."""
    return isinstance(statement, cst.For) and not RANK_INDEXES.isdisjoint(assigned_names(statement.target))


def _loop_only_names(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` binds only as the target of its own ``for`` statements: not a
    parameter, nor bound any other way in its body (nested functions and classes are their own
    scopes)."""
    parameters = set(parameter_names(function.params, stars=True))
    return {
        name
        for name, bindings in scope_bindings(function).items()
        if name not in parameters and all(binding.loop for binding in bindings)
    }

