"""Does this condition differ between ranks? The one answer every rule asks, and where it leads.

A condition differs between ranks only where the code proves it:

- it reads this process's rank or tests it (``accelerator.is_main_process``, ``local_rank == 0``,
  ``dist.get_rank()``, ``accelerator.process_index``, a name the file binds to one of them:
  ``trllint.facts.ranks``);
- or it reads a name whose value was set under such a test (``cancel_reason = "time limit"`` in
  ``if rank == 0:``), which the other ranks never set;
- or it reads data proven per-rank: this rank's batch, loss or outputs, what a loader yields it
  (``trllint.facts.rank_flow``), through the scope's assignments;
- or it reads a name the same function hands, as it stands, to a gather (``gather_object(images)``,
  ``dist.all_gather_object(out, images)``): no code gathers what every rank already holds; and
  the name may be None on some ranks only (a parameter with no default, or set to None under a
  test of this rank's data).

Everything else is agreed, every rank taking the same way: counters every rank advances in the
same statements (``global_step >= max_train_steps``), configuration (``args.resume_from_checkpoint``,
``accelerator.num_processes > 1``, ``world_size > 1``), flags a collective made (``check_trigger()``,
a broadcast list), values every rank computes from the same inputs, and whatever the linter cannot
read. An early exit on an agreed condition splits nothing.

A question may be asked under some backends only (a call that is a collective under DeepSpeed or
FSDP only): a disjunction that lets every rank in under one of them (``is_main_process or
distributed_type == DistributedType.DEEPSPEED``) is agreed there, and the split keeps only the
backends it still parts the ranks under.

``rank_divergence`` asks it of everything around a node: whether every rank that enters the
node's function reaches the node (where a fix may insert a collective).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import COMPREHENSIONS, argument, call_name, dotted_name
from trllint.core.findings import ReasonKind
from trllint.facts.accelerators import is_accelerator
from trllint.facts.branches import earlier_siblings
from trllint.facts.launch.backends import Backend
from trllint.facts.launch.backend_tests import backends_named
from trllint.facts.rank_flow import rank_flows
from trllint.facts.rank_lattice import Rank, is_torch_distributed, names_a_loader, names_in
from trllint.facts.ranks import rank_facts, splits_ranks
from trllint.semantic.model import SemanticModel


class Split(enum.Enum):
    """Why a condition parts the ranks."""

    RANK = "reads this process's rank"
    SET_ON_SOME_RANKS = "is set under a test of the rank: the other ranks keep what it held before"
    DATA = "reads this rank's own data"
    GATHERED = "reads a value each rank holds its own of, and may lack: the code gathers it from every rank"


@dataclass(frozen=True)
class RankSplit:
    """A condition that differs between ranks: why, and the node whose line makes them differ (the
    test itself, or the assignment that gave a name it reads its per-rank value)."""

    kind: Split
    origin: cst.CSTNode
    # The backends under which it still parts the ranks (None: under every backend).
    backends: frozenset[Backend] | None = None


def rank_split(
    model: SemanticModel,
    test: cst.BaseExpression,
    at: cst.CSTNode,
    backends: frozenset[Backend] | None = None,
    *,
    data: bool = True,
    gathered: bool | None = None,
) -> RankSplit | None:
    """Why ``test``, evaluated at statement ``at``, may be true on some ranks and false on others;
    None when every rank agrees on it (or nothing proves otherwise). With ``backends``, the
    question matters under those backends only: a disjunction that is true for certain under some
    of them lets every rank in there, and the answer keeps the others (None when none is left).
    With ``data`` False only a read of the rank counts: a rule whose prefilter needs a rank marker
    in the file asks so. ``gathered`` (by default as ``data``) counts a name the function gathers,
    the narrowest proof of per-rank data, on its own."""
    # Asked of each `if` once per call beneath it: one answer per file.
    key = (rank_split, test, at, backends, data, gathered)
    return model.once(key, lambda: _rank_split(model, test, at, backends, data, gathered))


def _rank_split(
    model: SemanticModel,
    test: cst.BaseExpression,
    at: cst.CSTNode,
    backends: frozenset[Backend] | None,
    data: bool,
    gathered: bool | None,
) -> RankSplit | None:
    if backends is not None:
        backends = backends - backends_named(test)
        if not backends:
            return None
    if splits_ranks(model, test):
        return RankSplit(Split.RANK, _rank_origin(model, test, at), backends)
    assigned = _assigned_under_rank_test(model, test, at)
    if assigned is not None:
        return RankSplit(Split.SET_ON_SOME_RANKS, assigned, backends)
    gather = _gathered_name(model, test, at) if (data if gathered is None else gathered) else None
    if not data:
        return RankSplit(Split.GATHERED, gather, backends) if gather is not None else None
    scope = model.context.enclosing_function(at) or model.source.module
    flow = rank_flows(model).flow(scope)
    try:
        if flow.depends_on_rank(test, at):
            return RankSplit(Split.DATA, _data_origin(model, test, at), backends)
    except RecursionError:
        pass  # a chain of assignments too deep to read: unknown is agreed
    return RankSplit(Split.GATHERED, gather, backends) if gather is not None else None


def differs_by_rank(model: SemanticModel, test: cst.BaseExpression, at: cst.CSTNode, *, data: bool = True) -> bool:
    """Whether ``test`` at ``at`` may differ between ranks (``rank_split`` is not None); with
    ``data`` False, only where it reads the rank."""
    return rank_split(model, test, at, data=data) is not None


def under_rank_split(model: SemanticModel, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    """``node`` sits in an ``if`` of ``scope`` whose test reads the rank (``if master_process:``):
    only some ranks run it."""
    for ancestor in model.context.ancestors(node):
        if ancestor is scope:
            return False
        if isinstance(ancestor, cst.If) and differs_by_rank(model, ancestor.test, ancestor, data=False):
            return True
    return False


def _rank_origin(model: SemanticModel, test: cst.BaseExpression, at: cst.CSTNode) -> cst.CSTNode:
    """The assignment that bound a rank test or index the test reads by name (``is_main = rank ==
    0``), else the test: the line a reader looks at to see why the ranks part."""
    scope = model.context.enclosing_function(at) or model.source.module
    flow = rank_flows(model).flow(scope)
    facts = rank_facts(model)
    for node in _names_read(test):
        name = dotted_name(node)
        if name is None:
            continue
        binding = flow.binding(name, at)
        value = binding.value if binding is not None else None
        if value is not None and (facts.splits_ranks(value) or facts.reads_rank(value)):
            return binding.statement  # type: ignore[union-attr]
    return test


def _assigned_under_rank_test(model: SemanticModel, test: cst.BaseExpression, at: cst.CSTNode) -> cst.CSTNode | None:
    """The assignment a name ``test`` reads got its value from, when it sits under a test of the
    rank that ``at`` is not under (``cancel_reason = "time limit"`` in ``if rank == 0:``): the
    other ranks hold what the name held before. Only the test's own names: a value handed to a
    call first (``flag = broadcast(flag)``) may be what every rank agrees on."""
    scope = model.context.enclosing_function(at) or model.source.module
    flow = rank_flows(model).flow(scope)
    around_at = set(map(id, model.context.ancestors(at)))
    for node in _names_read(test):
        name = dotted_name(node)
        binding = flow.binding(name, at) if name is not None else None
        if binding is None or binding.value is None:
            continue  # a parameter, a loop or `with` target: bound on every rank alike
        statement = binding.statement
        for ancestor in model.context.ancestors(statement):
            if ancestor is scope or id(ancestor) in around_at:
                break
            if isinstance(ancestor, cst.If) and splits_ranks(model, ancestor.test):
                return statement
    return None


def _data_origin(model: SemanticModel, test: cst.BaseExpression, at: cst.CSTNode) -> cst.CSTNode:
    """The assignment that gave a name the test reads this rank's data (``loss = model(**batch).loss``;
    for a parameter, its function), else the test."""
    scope = model.context.enclosing_function(at) or model.source.module
    flow = rank_flows(model).flow(scope)
    for node in _names_read(test):
        name = dotted_name(node)
        binding = flow.binding(name, at) if name is not None else None
        if binding is not None and binding.state == Rank.PER_RANK:
            return binding.statement
    return test


# Gathers that return every rank's copy of an argument and leave it as it was, and the position
# (or keyword) of that argument: what is passed there is this rank's own.
_GATHERED_ARGUMENT: dict[str, tuple[int, str]] = {
    "gather": (0, "tensor"),
    "gather_for_metrics": (0, "input_data"),
    "gather_object": (0, "obj"),
    "pad_across_processes": (0, "tensor"),
    "all_gather_object": (1, "obj"),
    "all_gather": (1, "tensor"),
    "all_gather_into_tensor": (1, "input_tensor"),
}
_TORCH_GATHERS = frozenset({"gather", "gather_object", "all_gather_object", "all_gather", "all_gather_into_tensor"})
_ACCELERATE_GATHERS = frozenset({"gather", "gather_object", "gather_for_metrics", "pad_across_processes"})
_OWN_SCOPES = walk.node_types(cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _gathered_name(model: SemanticModel, test: cst.BaseExpression, at: cst.CSTNode) -> cst.CSTNode | None:
    """A gather in ``at``'s function that is handed a plain name ``test`` reads,
    bound to the same value there as at ``at`` (``all_images = gather_object(images) if images is
    not None else None``), else None."""
    scope = model.context.enclosing_function(at) or model.source.module
    gathers = _gathers_in(model, scope)  # one walk per scope; most gather nothing
    if not gathers:
        return None
    read = {node.value for node in _names_read(test) if isinstance(node, cst.Name)}
    gathers = [(call, name) for call, name in gathers if name in read]
    if not gathers:
        return None
    flow = rank_flows(model).flow(scope)  # the cost, so read only for a gather of a name the test reads
    for call, name in gathers:
        statement = _statement_of(model, call)
        binding = flow.binding(name, at)
        if binding is None or statement is None or flow.binding(name, statement) is not binding:
            continue
        if _absent_per_rank(model, scope, name):
            return call
    return None


def _absent_per_rank(model: SemanticModel, scope: cst.FunctionDef | cst.Module, name: str) -> bool:
    """Whether ``name`` may be None on some ranks only: a parameter with no default (each rank's
    caller hands its own), or set to None under a test of this rank's data (``images = None``
    where this rank's batch has none). Not a value a call returns, nor one set to None by a
    setting (``x if args.include_inputs else None``): the same on every rank."""
    if isinstance(scope, cst.FunctionDef):
        for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            if param.name.value == name:
                return param.default is None
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for assign in walk.of_types(body, walk.node_types(cst.Assign), _OWN_SCOPES):
        if not any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets):
            continue
        value = assign.value
        if isinstance(value, cst.IfExp) and _is_none(value.orelse):
            if rank_split(model, value.test, assign, gathered=False) is not None:
                return True
        elif _is_none(value):
            for ancestor in model.context.ancestors(assign):
                if ancestor is scope:
                    break
                if isinstance(ancestor, cst.If) and rank_split(model, ancestor.test, ancestor, gathered=False) is not None:
                    return True
    return False


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _gathers_in(model: SemanticModel, scope: cst.FunctionDef | cst.Module) -> list[tuple[cst.Call, str]]:
    """The gathers ``scope`` runs itself (not in a def, class or lambda inside it), each with the
    plain name it gathers."""

    def find() -> list[tuple[cst.Call, str]]:
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        calls = walk.of_types(body, walk.node_types(cst.Call), _OWN_SCOPES)
        found: list[tuple[cst.Call, str]] = []
        for call in calls:
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", None)
            if method not in _GATHERED_ARGUMENT or not _is_gather(model, call, method):
                continue
            position, keyword = _GATHERED_ARGUMENT[method]
            handed = argument(call, keyword, position)
            if handed is not None and isinstance(handed.value, cst.Name):
                found.append((call, handed.value.value))
        return found

    return model.once((_gathers_in, id(scope)), find)


def _is_gather(model: SemanticModel, call: cst.Call, method: str) -> bool:
    """A gather of torch.distributed (or deepspeed.comm) or of accelerate, not ``torch.gather``
    nor a tensor's ``.gather`` (an index lookup)."""
    name = call_name(call)
    if name is None:
        return False
    full = model.imports.resolve(name) or name
    if is_torch_distributed(full) or is_torch_distributed(name):
        return method in _TORCH_GATHERS
    if full.startswith("accelerate."):
        return method in _ACCELERATE_GATHERS
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    return receiver is not None and method in _ACCELERATE_GATHERS and is_accelerator(receiver, model.context)


def _statement_of(model: SemanticModel, node: cst.CSTNode) -> cst.CSTNode | None:
    for ancestor in model.context.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ancestor
    return None


def _names_read(test: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
    """The names and dotted names ``test`` reads, outermost first (``self.is_main`` before ``self``)."""
    names = _NamesRead()
    test.visit(names)
    return names.found


class _NamesRead(cst.CSTVisitor):
    """``_names_read``'s walk. A class of the module, not one made per call: a class is a reference
    cycle, which would keep the tree it walked alive until the collector runs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Name | cst.Attribute] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if dotted_name(node) is not None:
            self.found.append(node)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


# ---- whether every rank reaches a node (where a fix may insert a collective) ----------------------


class Divergence(ReasonKind):
    """How some ranks may not reach a node; ``{code}`` is the test or iterable that decides."""

    IN_LAMBDA = "it runs inside a lambda, whenever that is called"
    RANK_GUARD = "it runs only on ranks where `{code}` holds"
    LOOP = "the number of iterations of `for ... in {code}` may differ per rank"
    SHORT_CIRCUIT = "it runs only on ranks where `{code}` lets it"
    EXCEPT_CLAUSE = "it runs only on ranks that raised"
    COMPREHENSION = "it runs once per element of a comprehension, whose length may differ per rank"
    EARLY_EXIT = "an earlier exit under `{code}` leaves on some ranks only"


@dataclass(frozen=True)
class RankDivergence:
    """Why some ranks may not reach a node: the kind, and the code that decides (shortened)."""

    kind: Divergence
    code: str = ""

    @property
    def text(self) -> str:
        return self.kind.text(code=self.code)


def rank_divergence(model: SemanticModel, node: cst.CSTNode, *, data: bool = True) -> RankDivergence | None:
    """Why some ranks may not reach ``node`` in its function (a collective there would hang), or
    None when every rank that enters the function reaches it.

    A test or iterable decides per rank where ``rank_split`` says it differs between ranks (with
    ``data`` False, only where it reads the rank). Divergence is a condition, loop or
    short-circuit on such a value around ``node``, an ``except`` clause, or an earlier exit
    (return, break, continue) under one.
    """

    def varies(test: cst.CSTNode, at: cst.CSTNode) -> bool:
        if not isinstance(test, cst.BaseExpression):
            return False
        return rank_split(model, test, at, data=data) is not None

    def shown(test: cst.CSTNode) -> str:
        text = " ".join(model.source.module.code_for_node(test).split())
        return text if len(text) <= 60 else text[:57] + "..."

    child: cst.CSTNode = node
    for ancestor in model.context.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return None
        if isinstance(ancestor, cst.Lambda):
            return RankDivergence(Divergence.IN_LAMBDA)
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is not ancestor.test and varies(ancestor.test, ancestor):
            return RankDivergence(Divergence.RANK_GUARD, shown(ancestor.test))
        if (
            isinstance(ancestor, cst.For)
            and child is ancestor.body
            and varies(ancestor.iter, ancestor)
            and not _is_loader(ancestor.iter)
        ):
            return RankDivergence(Divergence.LOOP, shown(ancestor.iter))
        if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right and varies(ancestor.left, node):
            return RankDivergence(Divergence.SHORT_CIRCUIT, shown(ancestor.left))
        if isinstance(ancestor, cst.ExceptHandler):
            return RankDivergence(Divergence.EXCEPT_CLAUSE)
        if isinstance(ancestor, (cst.CompFor, *COMPREHENSIONS)):
            return RankDivergence(Divergence.COMPREHENSION)
        if isinstance(ancestor, (cst.IndentedBlock, cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for earlier in earlier_siblings(ancestor.body, child):
                exit_test = _exit_under_varying_test(earlier, varies)
                if exit_test is not None:
                    return RankDivergence(Divergence.EARLY_EXIT, shown(exit_test))
        child = ancestor
    return None


def _exit_under_varying_test(
    statement: cst.CSTNode, varies: Callable[[cst.CSTNode, cst.CSTNode], bool], in_loop: bool = False
) -> cst.BaseExpression | None:
    """The test of an ``if`` in ``statement`` that varies per rank and guards a return (or a
    break/continue of the loop the node is in), else None."""
    if isinstance(statement, cst.If):
        arms = [statement.body] + ([statement.orelse] if statement.orelse is not None else [])
        if any(_has_exit(arm, in_loop) for arm in arms) and varies(statement.test, statement):
            return statement.test
        inner = [s for arm in arms for s in ([arm] if isinstance(arm, cst.If) else _block(arm))]
    elif isinstance(statement, (cst.For, cst.While)):
        inner, in_loop = _block(statement.body), True
    elif isinstance(statement, (cst.With, cst.Try)):
        inner = _block(statement.body) + [s for h in getattr(statement, "handlers", ()) for s in _block(h.body)]
    else:
        return None
    for nested in inner:
        found = _exit_under_varying_test(nested, varies, in_loop)
        if found is not None:
            return found
    return None


def _block(suite: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(suite, cst.Else):
        suite = suite.body
    return list(getattr(suite, "body", ()))


def _has_exit(block: cst.CSTNode, in_loop: bool) -> bool:
    """A return in ``block`` (a break or continue too, unless they leave a loop inside the node's)."""
    exits = (cst.Return,) if in_loop else (cst.Return, cst.Break, cst.Continue)
    found = False

    class Exits(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            found = found or isinstance(node, exits)
            return not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))

    block.visit(Exits())
    return found


def _is_loader(iterable: cst.CSTNode) -> bool:
    # A prepared data loader yields the same number of batches on every rank (even_batches).
    return any(names_a_loader(name) for name in names_in(iterable))

