"""What the code around a collective says, read from its syntax: whether an if that holds it tests
a parameter (or one a caller switched off), the names its function binds once, how a block ends,
and what runs when a node runs (its calls, its ifs, what it assigns)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import assigned_names, parameters
from trllint.facts.branches import holds_at
from trllint.core.source import SourceFile
from trllint.semantic.context import NodeContext
from trllint.semantic.model import SemanticModel

_EXITS = {cst.Return: "return", cst.Continue: "continue", cst.Break: "break"}
_OWN_SCOPES = walk.node_types(cst.FunctionDef, cst.ClassDef, cst.Lambda)


def run_by(node: cst.CSTNode, *, kinds: tuple[type, ...] = (cst.Call,), nested: bool = False) -> list:
    """The calls (or nodes of ``kinds``) that run when ``node`` runs, in source order; with
    ``nested``, those in the functions and lambdas defined there too."""
    # Asked of whole functions, helper after helper: types by set membership, not isinstance
    # (trllint.core.cst.walk.node_types).
    return walk.of_types(node, walk.node_types(*kinds), frozenset() if nested else _OWN_SCOPES)


def ifs_in(scope: cst.CSTNode) -> list[cst.If]:
    return run_by(scope, kinds=(cst.If,))


def made_in(branch: cst.CSTNode, call: cst.Call) -> bool:
    """True when the object the call is made on is created in ``branch`` (``fake = Trainer(...)``):
    only the ranks that run the branch have it, so no other rank is waited for."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    while isinstance(receiver, cst.Attribute):
        receiver = receiver.value
    if not isinstance(receiver, cst.Name) or receiver.value == "self":
        return False
    for node in run_by(branch, kinds=(cst.Assign,)):
        if any(receiver.value in assigned_names(t.target) for t in node.targets):
            return True
    return False


def under_parameter_test(
    call: cst.Call, function: cst.FunctionDef, context: NodeContext, enters: Callable[[cst.CSTNode], bool]
) -> bool:
    """``call`` runs in ``function`` under an ``if`` on one of its parameters (either side) whose
    other side does not enter a collective too (``if t.is_cuda: all_reduce(t) else:
    all_reduce(t.cuda())`` enters one whatever the caller passes): ``enters`` says which do."""
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    child: cst.CSTNode = call
    for ancestor in context.ancestors(call):
        if ancestor is function:
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp)) and walk.identifiers(ancestor.test) & names:
            if child is ancestor.test or not _every_arm_enters(ancestor.orelse if child is ancestor.body else ancestor.body, enters):
                return True
        child = ancestor
    return False


def _every_arm_enters(block: cst.CSTNode | None, enters: Callable[[cst.CSTNode], bool]) -> bool:
    """Every way through ``block`` (an ``elif`` chain to its final ``else``) enters a collective."""
    if isinstance(block, cst.If):
        return enters(block.body) and _every_arm_enters(block.orelse, enters)
    return block is not None and enters(block)


def switched_off(call: cst.Call, function: cst.FunctionDef) -> frozenset[str]:
    """The parameters of ``function`` that ``call`` passes a false constant (``False``, ``None``,
    ``0``), by keyword or by position (a ``self.f(...)`` call skips ``self``), and that the
    function never binds again (``sync = sync or step % 100 == 0``)."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if isinstance(call.func, cst.Attribute) and positional and positional[0].name.value in ("self", "cls"):
        positional = positional[1:]
    keywords = {param.name.value for param in parameters(params)}
    off: set[str] = set()
    position = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value in keywords and _false_constant(arg.value):
                off.add(arg.keyword.value)
        elif arg.star:
            position = len(positional)  # where the later ones land is not known
        else:
            if position < len(positional) and _false_constant(arg.value):
                off.add(positional[position].name.value)
            position += 1
    return frozenset(off - _bound_in(function)) if off else frozenset()


def runs_only_when_on(model: SemanticModel, call: cst.Call, off: frozenset[str]) -> bool:
    """``call`` runs only where ``p`` is true (in the body of ``if p:``, after ``if not p: return``),
    ``p`` one of the parameters ``off`` (a caller passed them a false constant)."""

    def switched_on(test: cst.BaseExpression) -> tuple[bool | None, bool | None]:
        return (isinstance(test, cst.Name) and test.value in off) or None, None

    return bool(off) and holds_at(model, call, switched_on)


def _false_constant(value: cst.BaseExpression) -> bool:
    return (isinstance(value, cst.Name) and value.value in ("False", "None")) or (
        isinstance(value, cst.Integer) and value.evaluated_value == 0
    )


def _bound_in(function: cst.FunctionDef) -> set[str]:
    """The names ``function``'s own statements bind."""
    return {name for _, names in _bindings(function) for name in names}


def single_assignments(function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """The plain names ``function`` binds once, by a plain assignment, with their values."""
    values: dict[str, cst.BaseExpression] = {}
    bound_again: set[str] = set()
    for node, names in _bindings(function):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if name in values:
                bound_again.add(name)
            values[name] = node.value
        else:
            bound_again.update(names)
    return {name: value for name, value in values.items() if name not in bound_again}


def _bindings(function: cst.FunctionDef) -> Iterator[tuple[cst.CSTNode, list[str]]]:
    """Each of ``function``'s own statements that binds names, with them: assignments (augmented
    and annotated too), loop and ``with`` targets."""
    for node in walk.statements(function.body, into_definitions=False):
        if isinstance(node, cst.Assign):
            yield node, [name for target in node.targets for name in assigned_names(target.target)]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            yield node, assigned_names(node.target)
        elif isinstance(node, cst.With):
            yield node, [name for item in node.items if item.asname is not None for name in assigned_names(item.asname.name)]


def exit_of(block: cst.BaseSuite) -> str | None:
    """``return``/``continue``/``break`` when ``block`` always ends with one (``raise`` crashes, not hangs)."""
    statements = getattr(block, "body", ())
    if not statements:
        return None
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        last = last.body[-1]
    return _EXITS.get(type(last))


def code_of(source: SourceFile, node: cst.CSTNode) -> str:
    """The node's code on one line, as a message quotes it."""
    return " ".join(source.module.code_for_node(node).split())
