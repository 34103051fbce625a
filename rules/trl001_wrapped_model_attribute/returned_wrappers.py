"""Functions of the project that return the model wrapped in DDP or DataParallel.

A training script often leaves the wrap to a helper of its project (``model = setup_ddp(model,
rank)`` with ``return DistributedDataParallel(model, device_ids=[rank])`` in ``dist_utils.py``):
the name it binds is a wrapper as surely as a wrap in the script. Asked of the helper's module as
a ``ModuleFact``, answered from its LibCST tree.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import call_name, parameter_names, scope_bindings
from trllint.core.prefilter import AnyOf
from trllint.facts.wrapping import DATA_PARALLEL, DATA_PARALLEL_WRAPPERS, Wrapping, returns_a_wrapper
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.summaries import ModuleFact

if TYPE_CHECKING:
    from trllint.semantic.project.index import ProjectView

# A module that spells neither wrapper as a word of its own returns no wrapper of its own making
# (`FullyShardedDataParallel` holds "DataParallel" but is neither).
SPELLS_A_WRAPPER = AnyOf(*(re.compile(rf"{name}(?<!\w{name})\b") for name in DATA_PARALLEL_WRAPPERS))


def _returned_wrappers(model: SemanticModel) -> dict[str, list[Any]]:
    """Function name -> ``[wrapper class, conditional]`` for each top-level function whose
    return value is a DDP or DataParallel it made (``conditional``: some path returns anything else)."""
    answer: dict[str, list[Any]] = {}
    for statement in model.source.module.body:
        if isinstance(statement, cst.FunctionDef):
            found = returns_a_wrapper(statement, model.imports)
            if found is not None:
                answer[statement.name.value] = [found.wrapper, found.conditional]
            else:
                answer.pop(statement.name.value, None)  # a later def of the name wins
    return answer


def returned_parameter(function: cst.FunctionDef) -> str | None:
    """The parameter ``function`` hands back as it received it: every ``return`` returns that name,
    the body ends with one, and nothing in the body binds the name again
    (``def data_dependent_init(loader, model): ...; return model``). A wrapper passed in comes back;
    a generator or a coroutine hands back something else."""
    body = function.body
    if function.asynchronous is not None or not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    last = body.body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return None  # a path may fall off the end and return None
    returns = _Returned(function)
    walk.visit(function, returns)
    if len(returns.names) != 1:
        return None
    name = next(iter(returns.names))
    if name is None or name not in parameter_names(function.params) or name in scope_bindings(function):
        return None
    return name


class _Returned(cst.CSTVisitor):
    """The names a function's own ``return`` statements return (None for anything else, and for a
    ``yield``). A class of the module: one made per call would leave a cycle holding the tree."""

    def __init__(self, function: cst.FunctionDef) -> None:
        super().__init__()
        self.function = function
        self.names: set[str | None] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.names.add(node.value.value if isinstance(node.value, cst.Name) else None)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.names.add(None)


def arguments_given(call: cst.Call, callee: cst.FunctionDef, skip_self: bool) -> dict[str, cst.BaseExpression]:
    """What ``call`` passes each of ``callee``'s parameters: by keyword, or by position before any
    ``*args`` (where the later ones land is not known)."""
    params = callee.params
    named = set(parameter_names(params))
    positional = [p.name.value for p in (*params.posonly_params, *params.params)][1 if skip_self else 0 :]
    given: dict[str, cst.BaseExpression] = {}
    position, unpacked = 0, False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value in named:
                given[arg.keyword.value] = arg.value
        elif arg.star:
            unpacked = unpacked or arg.star == "*"
        elif not unpacked:
            if position < len(positional):
                given.setdefault(positional[position], arg.value)
            position += 1
    return given


RETURNED_WRAPPERS = ModuleFact("wrapping.returned-wrappers", 1, _returned_wrappers)


def returned_wrapping(project: ProjectView | None, call: cst.Call) -> Wrapping | None:
    """The wrapping a call of a project function returns (``setup_ddp(model, rank)``), or None."""
    name = call_name(call)
    if project is None or name is None or name.count(".") > 1:
        return None
    definition = project.function_spelling(name, SPELLS_A_WRAPPER)
    if definition is None:
        return None
    answer = project.fact(definition, RETURNED_WRAPPERS, SPELLS_A_WRAPPER)
    found = (answer or {}).get(definition.name)
    if not found:
        return None
    wrapper, conditional = found
    origin = f"{wrapper}(...) in {name}()"
    return Wrapping(DATA_PARALLEL, origin, wrapper=wrapper, conditional=bool(conditional), other_module=True)
