"""Which conditions split the ranks: true on some processes of a distributed job, false on others.

Under DDP, DeepSpeed or FSDP every rank runs the same script; a test on the rank itself
(``accelerator.is_main_process``, ``dist.get_rank() == 0``, ``args.local_rank in (-1, 0)``,
``trainer.is_world_process_zero()``) sends rank 0 one way and the others another. Code under
such a test runs on some ranks only: fine for printing and writing files, a hang for anything
every rank must enter.

Tests all ranks agree on are not rank tests: ``num_processes > 1``, ``local_rank != -1`` (the old
"is this run distributed?" spelling), ``rank is None``, flags, step counters, ``sync_gradients``.

Names assigned from rank tests or rank indexes (``is_main = rank == 0``, ``rank = dist.get_rank()``,
``self.is_main = accelerator.is_main_process``) are followed file-wide, when every assignment to
the name in the file is one.

This is the one definition of a rank test: rules and other facts ask ``splits_ranks(model, test)``
(does a branch on it let only some ranks in: TRL006's guards, TRL004's fix safety through
``branches.rank_divergence``), ``reads_rank(model, expr)`` (may the value differ by rank) and
``is_rank_index(model, expr)`` (the rank itself: what the rank flow counts as per-rank).
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import COMPREHENSIONS, assigned_names, dotted_name, last_attribute
from trllint.core.source import SourceFile
from trllint.facts.loop_and_matrix_ranks import loop_rank_nodes, matrix_ranks
from trllint.facts.rank_lattice import is_progress_bar
from trllint.facts.rank_reads import (
    ARGUMENT_PREDICATES,
    MAIN_ONLY_DECORATORS,
    RANK_CALL,
    RANK_INDEXES,
    RANK_PREDICATES,
    integer_constants,
    is_rank_variable_read,
    names_a_rank,
    rank_variable,
    read_children,
)
from trllint.semantic.model import SemanticModel


# A test reduced to the rank fact it checks and the ranks it holds on:
# `accelerator.is_main_process` -> ("is_main_process", {0}), `rank != 0` -> ("rank", {1, 2}).
# The ranks are stood for by 0, 1 and 2: the first rank and two others.
GuardKey = tuple[str, frozenset[int]]
ALL_RANKS = frozenset({0, 1, 2})
_FIRST_RANK = frozenset({0})
# A comparison's operator -> whether it holds for a rank against the test's integer constants.
_CHECKS: dict[type[cst.BaseCompOp], Callable[[int, list[int]], bool]] = {
    cst.Equal: lambda r, c: r == c[0],
    cst.NotEqual: lambda r, c: r != c[0],
    cst.In: lambda r, c: r in c,
    cst.NotIn: lambda r, c: r not in c,
    cst.LessThan: lambda r, c: r < c[0],
    cst.LessThanEqual: lambda r, c: r <= c[0],
    cst.GreaterThan: lambda r, c: r > c[0],
    cst.GreaterThanEqual: lambda r, c: r >= c[0],
}
_MIRRORED: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
}


class RankFacts:
    """The rank tests of one file (built once per file, ``RankFacts.of``)."""

    def __init__(self, module: cst.Module, identifiers: walk.Identifiers = walk.identifiers) -> None:
        """``identifiers``: ``walk.identifiers``, or the semantic model's, which keeps each answer."""
        self._identifiers = identifiers
        self._index_names: set[str] = set()
        self._index_tails: set[str] = set()  # the last part of each index name
        self._predicate_names: set[str] = set()
        self._predicate_tails: set[str] = set()
        statements = walk.statements(module)  # an assignment, a loop, a definition: no expression is walked
        # The functions that spell a rank-named name: the only ones a matrix or a loop rank can be in.
        naming = [
            node for node in statements if isinstance(node, cst.FunctionDef) and not RANK_INDEXES.isdisjoint(identifiers(node))
        ]
        # Matrix ranks (`nn.Linear(d, rank)`) and loop variables (`for rank in range(world_size):`):
        # no process's rank.
        self._low_rank_attributes, self._low_rank_nodes = matrix_ranks(naming)
        self._loop_variable_nodes = loop_rank_nodes(statements, naming)
        self._follow_assignments(statements)

    @classmethod
    def of(cls, source: SourceFile) -> RankFacts:
        """Which names of the file hold a rank index or a rank predicate, once per file."""
        return rank_facts(SemanticModel.of(source))

    # ---- questions ----------------------------------------------------------------------

    def splits_ranks(self, test: cst.BaseExpression) -> bool:
        """True when ``test`` may be true on some ranks and false on others."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.splits_ranks(test.expression)
        if isinstance(test, cst.BooleanOperation):
            return self.splits_ranks(test.left) or self.splits_ranks(test.right)
        if isinstance(test, cst.Comparison):
            return self._comparison_splits(test)
        if self.is_rank_predicate(test):
            return True
        return self.reads_rank_index(test)  # `if rank:` is `rank != 0`

    def reads_rank(self, node: cst.CSTNode, shadowed: frozenset[str] = frozenset()) -> bool:
        """True when the value of ``node`` may differ by rank because it reads the rank: this
        process's rank (``accelerator.process_index``, ``os.environ["RANK"]``), a rank predicate,
        or a test on them that some ranks pass and others fail. A test every rank answers alike
        (``local_rank != -1``, ``rank is None``) reads the rank but not a different value, and
        neither does a comprehension over the ranks (see ``reads_rank_index``)."""
        if shadowed and isinstance(node, cst.Name) and node.value in shadowed:
            return False
        if isinstance(node, cst.Comparison) and self.agreed_by_every_rank(node):
            return False
        if (isinstance(node, cst.BaseExpression) and self.is_rank_predicate(node)) or self.is_rank_index(node):
            return True
        if isinstance(node, (cst.Lambda, cst.BaseString)):
            return False
        if isinstance(node, COMPREHENSIONS):
            shadowed = shadowed | _comprehension_targets(node)
        return any(self.reads_rank(child, shadowed) for child in read_children(node))

    def agreed_by_every_rank(self, test: cst.Comparison) -> bool:
        """True when ``test`` compares the rank but every rank answers it alike: ranks are 0, 1,
        2, ... (-1 without distribution), so ``local_rank != -1`` or ``rank >= 0`` holds on every
        rank or on none, and ``rank is None`` on none once the rank is set."""
        operands = [test.left, *(target.comparator for target in test.comparisons)]
        if not any(self.reads_rank_index(o) or self.is_rank_predicate(o) for o in operands):
            return False
        return not self._comparison_splits(test)

    def only_rank_tests(self, test: cst.BaseExpression) -> bool:
        """True when every operand of ``test`` (through ``not``/``and``/``or``) splits the ranks:
        running what it guards on every rank changes nothing but which ranks run it."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.only_rank_tests(test.expression)
        if isinstance(test, cst.BooleanOperation):
            return self.only_rank_tests(test.left) and self.only_rank_tests(test.right)
        return self.splits_ranks(test)

    def is_rank_predicate(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            return not node.args and last_attribute(dotted_name(node.func)) in RANK_PREDICATES
        name = dotted_name(node)
        if name is None:
            return False
        parts = name.split(".")
        if parts[-1] in ARGUMENT_PREDICATES:
            return len(parts) > 1 and parts[-2].endswith("args")  # args, training_args, self.args
        return parts[-1] in RANK_PREDICATES or name in self._predicate_names

    def reads_rank_index(
        self, node: cst.CSTNode, shadowed: frozenset[str] = frozenset(), *, through_calls: bool = True
    ) -> bool:
        """True when ``node`` reads this process's rank anywhere inside it. A name a comprehension
        binds is its own (``{rank: [] for rank in range(world_size)}`` iterates over every rank,
        the same on each, and holds no process's rank). ``through_calls=False``: not in a call's
        arguments, but for a conversion (``int(rank)``)."""
        if shadowed and isinstance(node, cst.Name) and node.value in shadowed:
            return False
        if self.is_rank_index(node):
            return True
        if isinstance(node, (cst.Lambda, cst.BaseString)):
            return False
        if not through_calls and isinstance(node, cst.Call) and dotted_name(node.func) not in RANK_CONVERSIONS:
            return False
        if isinstance(node, COMPREHENSIONS):
            shadowed = shadowed | _comprehension_targets(node)
        return any(
            self.reads_rank_index(child, shadowed, through_calls=through_calls) for child in read_children(node)
        )

    def is_rank_index(self, node: cst.CSTNode) -> bool:
        """True when ``node`` itself is this process's rank (not something built from it):
        ``rank``, ``args.local_rank``, ``dist.get_rank()``, ``os.environ["LOCAL_RANK"]``, or a
        name the file assigns only such values."""
        if isinstance(node, cst.Name):
            return (
                (node.value in RANK_INDEXES or node.value in self._index_names)
                and id(node) not in self._low_rank_nodes
                and id(node) not in self._loop_variable_nodes
            )
        if isinstance(node, cst.Attribute):
            # The dotted name only when the last part could match (most attributes cannot).
            tail = node.attr.value
            return (tail in RANK_INDEXES or tail in self._index_tails) and (
                (name := dotted_name(node)) is not None
                and (tail in RANK_INDEXES or name in self._index_names)
                and name not in self._low_rank_attributes
            )
        if isinstance(node, cst.Call):
            called = last_attribute(dotted_name(node.func)) or ""
            if RANK_CALL.match(called) is None:
                return is_rank_variable_read(node)
            # A project's getter (`safe_get_rank()`) takes no argument; `_get_rank(layer)` is LoRA's.
            return called.startswith("get_") or not node.args
        return isinstance(node, cst.Subscript) and is_rank_variable_read(node)

    def guard_key(self, test: cst.BaseExpression) -> GuardKey | None:
        """The rank fact ``test`` checks and the ranks it holds on, so that ``if not is_main:`` pairs
        with ``if is_main:`` and ``local_rank not in [-1, 0]`` with ``local_rank == 0``. A rank test
        joined by ``and`` to conditions every rank answers alike (``mode == "train"``) keys on those
        conditions too: two such tests pair when they share them, since then every rank or none
        goes on to the rank test."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.guard_key(test.expression)
            return (inner[0], ALL_RANKS - inner[1]) if inner is not None else None
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            operands = _and_operands(test)
            rank_tests = [o for o in operands if self.splits_ranks(o)]
            shared = [o for o in operands if not self.splits_ranks(o)]
            key = self.guard_key(rank_tests[0]) if len(rank_tests) == 1 else None
            if key is None or any(self.reads_rank(o) for o in shared):
                return None
            conditions = sorted(" ".join(cst.Module([]).code_for_node(o).split()) for o in shared)
            return (" and ".join([key[0], *conditions]), key[1])
        if self.is_rank_predicate(test):
            function = test.func if isinstance(test, cst.Call) else test
            name = dotted_name(function) or ""
            return (name if name in self._predicate_names else last_attribute(name) or name, _FIRST_RANK)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            holds = self._holds_on(test)
            if holds is not None:
                rank = test.left if self.reads_rank_index(test.left) else target.comparator
                return (_key_name(_rank_text(rank)), holds)
            positive = isinstance(target.operator, (cst.Equal, cst.Is))
            if positive or isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
                left, right = _text(test.left), _text(target.comparator)
                if left is not None and right is not None:
                    return (f"{left}=={right}", _FIRST_RANK if positive else ALL_RANKS - _FIRST_RANK)
        return None

    @staticmethod
    def main_only_decorator(function: cst.FunctionDef) -> str | None:
        """The decorator that runs ``function`` on some ranks only (``on_main_process``), if any."""
        for decorator in function.decorators:
            node = decorator.decorator
            name = last_attribute(dotted_name(node.func if isinstance(node, cst.Call) else node))
            if name in MAIN_ONLY_DECORATORS:
                return name
        return None

    # ---- comparisons ------------------------------------------------------------------------

    def _comparison_splits(self, test: cst.Comparison) -> bool:
        operands = [test.left, *(target.comparator for target in test.comparisons)]
        if not any(self.reads_rank_index(o) or self.is_rank_predicate(o) for o in operands):
            return False
        target = test.comparisons[0]
        if len(test.comparisons) == 1 and isinstance(target.operator, (cst.Is, cst.IsNot)):
            return not any(isinstance(o, cst.Name) and o.value == "None" for o in operands)
        holds = self._holds_on(test)
        # Ranks are 0, 1, 2, ... (-1 without distribution): a test that cannot tell them apart
        # (`local_rank != -1`, `rank >= 0`) holds on every rank or on none.
        return holds is None or holds not in (frozenset(), ALL_RANKS)

    def _holds_on(self, test: cst.Comparison) -> frozenset[int] | None:
        """Which of the ranks 0, 1 and 2 a rank-against-integers test holds on (None: not such a test)."""
        if len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        rank, other, flipped = test.left, target.comparator, False
        if not self.reads_rank_index(rank):
            rank, other, flipped = other, rank, True
        if not self.reads_rank_index(rank) or _rank_text(rank) is None:
            return None  # `int(os.environ["RANK"]) + 1 == n`: some arithmetic on it
        constants = integer_constants(other)
        if constants is None:
            return None
        operator = type(target.operator)
        if flipped:  # `0 < rank` reads as `rank > 0`
            operator = _MIRRORED.get(operator, operator)
        check = _CHECKS.get(operator)
        if check is None or (len(constants) != 1 and operator not in (cst.In, cst.NotIn)):
            return None
        modulus = _modulus(rank)  # `rank % 2 == 0`: the test holds on the ranks whose remainder matches
        return frozenset(r for r in sorted(ALL_RANKS) if check(r % modulus if modulus else r, constants))

    # ---- names bound to rank tests ----------------------------------------------------------

    def _add_index(self, name: str) -> None:
        self._index_names.add(name)
        self._index_tails.add(name.rsplit(".", 1)[-1])

    def _may_test_ranks(self, names: frozenset[str]) -> bool:
        """Whether an expression reading these names (and attribute names) may read the rank or
        test it: each way ``reads_rank_index`` and ``is_rank_predicate`` match goes through a name
        whose last part this checks."""
        return any(
            names_a_rank(name) or name in self._index_tails or name in self._predicate_tails for name in names
        )

    def _holds_the_rank(self, value: cst.BaseExpression) -> bool:
        """``dist.get_rank()``, ``int(os.environ["RANK"])``, ``rank % 8``: the rank or arithmetic
        on it, not a test on it, nor what a function handed it returns (a logger made for it)."""
        tests = (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)
        return not isinstance(value, tests) and self.reads_rank_index(value, through_calls=False)

    def _binds_a_rank_test(self, value: cst.BaseExpression) -> bool:
        """``rank == 0``, ``is_main_process()``: a test some ranks pass, not a call handed the rank."""
        if isinstance(value, cst.Call) and not self.is_rank_predicate(value):
            return False
        return self.splits_ranks(value)

    def _follow_assignments(self, statements: list[cst.CSTNode]) -> None:
        assignments: dict[str, list[cst.BaseExpression | None]] = {}  # None: a value not known

        def unknown(target: cst.BaseExpression) -> None:
            for name in assigned_names(target, unnamed=""):
                if name:
                    assignments.setdefault(name, []).append(None)

        for node in statements:
            # Leaf classes, compared with `is` (trllint.core.cst.walk.node_types).
            if type(node) is cst.Assign:
                for target in node.targets:
                    for name in assigned_names(target.target, unnamed=""):
                        if name:
                            # A tuple target's elements are not the value: they read as unknown.
                            value = node.value if isinstance(target.target, (cst.Name, cst.Attribute)) else None
                            assignments.setdefault(name, []).append(value)
            elif type(node) is cst.AnnAssign and node.value is not None:
                for name in assigned_names(node.target):
                    assignments.setdefault(name, []).append(node.value)
            # Every other statement that binds a name gives it a value this pass does not read,
            # so a name is followed only where all its bindings are known: `step = int(ckpt[
            # "step"])` in a loader does not make the training loop's `for step in ...` a rank.
            # (A comprehension's target is its own scope's; a walrus is too rare to walk for.)
            elif type(node) is cst.For or type(node) is cst.AugAssign:
                unknown(node.target)
            elif type(node) is cst.With:
                for item in node.items:
                    if item.asname is not None:
                        unknown(item.asname.name)
            elif type(node) is cst.Try:
                for handler in node.handlers:
                    if handler.name is not None:
                        unknown(handler.name.name)
        # `bar = tqdm(..., disable=not accelerator.is_main_process)`: a disabled bar never counts,
        # so `bar.n` is the step on rank 0 and 0 elsewhere (transformers#31532).
        for name, values in assignments.items():
            if all(v is not None and _progress_bar_disabled_by_rank(v, self) for v in values):
                self._add_index(f"{name}.n")
        # Two rounds follow `rank = dist.get_rank()` then `is_main = rank == 0`; a second round
        # after a first that found nothing would find nothing either.
        mentioned = {id(v): self._identifiers(v) for values in assignments.values() for v in values if v is not None}
        for _ in range(2):
            known = len(self._index_names) + len(self._predicate_names)
            for name, values in assignments.items():
                known_values = [v for v in values if v is not None]
                if len(known_values) == len(values) and all(
                    self._may_test_ranks(mentioned[id(v)]) for v in known_values
                ):
                    if all(self._holds_the_rank(v) for v in known_values):
                        self._add_index(name)
                    elif all(self._binds_a_rank_test(v) for v in known_values):
                        self._predicate_names.add(name)
                        self._predicate_tails.add(name.rsplit(".", 1)[-1])
            if len(self._index_names) + len(self._predicate_names) == known:
                break


# ---- the questions rules and other facts ask ---------------------------------------------------


def rank_facts(model: SemanticModel) -> RankFacts:
    """The file's rank facts (names bound to rank tests and indexes), built once per file."""
    return model.once((rank_facts,), lambda: RankFacts(model.source.module, model.identifiers))


def splits_ranks(model: SemanticModel, test: cst.BaseExpression) -> bool:
    """Whether a branch on ``test`` lets only some ranks in (``accelerator.is_main_process``,
    ``os.environ["LOCAL_RANK"] == "0"``); not ``num_processes > 1`` or ``local_rank != -1``."""
    return rank_facts(model).splits_ranks(test)


def reads_rank(model: SemanticModel, expr: cst.CSTNode) -> bool:
    """Whether the value of ``expr`` may differ by rank because it reads the rank (its index, a
    rank predicate, or a test on them that splits the ranks)."""
    return rank_facts(model).reads_rank(expr)


def only_rank_tests(model: SemanticModel, test: cst.BaseExpression) -> bool:
    """Whether every operand of ``test`` (through ``not``/``and``/``or``) splits the ranks."""
    return rank_facts(model).only_rank_tests(test)


def guard_key(model: SemanticModel, test: cst.BaseExpression) -> GuardKey | None:
    """The rank fact ``test`` checks and the ranks it holds on (``RankFacts.guard_key``)."""
    return rank_facts(model).guard_key(test)


def main_only_decorator(function: cst.FunctionDef) -> str | None:
    """The decorator that runs ``function`` on some ranks only (``on_main_process``), if any."""
    return RankFacts.main_only_decorator(function)


def is_rank_index(model: SemanticModel, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` itself is this process's rank (``dist.get_rank()``, ``args.local_rank``)."""
    return rank_facts(model).is_rank_index(expr)


def agreed_by_every_rank(model: SemanticModel, test: cst.Comparison) -> bool:
    """Whether ``test`` compares the rank in a way every rank answers alike (``local_rank != -1``)."""
    return rank_facts(model).agreed_by_every_rank(test)


def _comprehension_targets(node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> frozenset[str]:
    """The names the ``for`` clauses of a comprehension bind (its own scope's, not the function's)."""
    names: set[str] = set()
    clause: cst.CompFor | None = node.for_in
    while clause is not None:
        names.update(assigned_names(clause.target))
        clause = clause.inner_for_in
    return frozenset(names)


def _progress_bar_disabled_by_rank(value: cst.BaseExpression, ranks: RankFacts) -> bool:
    if not isinstance(value, cst.Call) or not is_progress_bar(value):
        return False
    disable = next((a for a in value.args if a.keyword is not None and a.keyword.value == "disable"), None)
    return disable is not None and ranks.splits_ranks(disable.value)


# Builtins that turn the rank into the rank in another type.
RANK_CONVERSIONS = frozenset({"int", "str", "float"})


def _rank_text(node: cst.BaseExpression) -> str | None:
    """How a rank read is named, so that two tests on the same rank pair: ``args.local_rank``,
    ``dist.get_rank()``; an environment read by its variable (``int(os.environ["RANK"])`` and
    ``os.getenv("RANK", 0)`` are both ``RANK``); ``rank % 2`` by the rank and the modulus. None
    for other arithmetic on a rank (``rank + 1``)."""
    modulus = _modulus(node)
    if modulus and isinstance(node, cst.BinaryOperation):
        inner = _rank_text(node.left)
        return f"{inner} % {modulus}" if inner is not None else None
    if isinstance(node, cst.Call) and dotted_name(node.func) in RANK_CONVERSIONS and len(node.args) == 1:
        node = node.args[0].value
    variable = rank_variable(node)
    return variable if variable is not None else _text(node)


def _modulus(node: cst.BaseExpression) -> int | None:
    """``k`` for ``rank % k`` with a positive integer ``k`` (ranks staggered in turns), else None."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)):
        return None
    constants = integer_constants(node.right)
    return constants[0] if constants is not None and len(constants) == 1 and constants[0] > 0 else None


def _key_name(rank_text: str | None) -> str:
    """The name a guard key gives a rank read: its last part (``args.local_rank`` and
    ``local_rank`` pair), with a modulus kept whole (``rank % 2``)."""
    if rank_text is not None and " % " in rank_text:
        read, modulus = rank_text.rsplit(" % ", 1)
        return f"{last_attribute(read) or read} % {modulus}"
    return last_attribute(rank_text) or ""


def _and_operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of ``a and b and c`` (parentheses aside)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*_and_operands(test.left), *_and_operands(test.right)]
    return [test]


def _text(node: cst.BaseExpression) -> str | None:
    name = dotted_name(node)
    if name is not None:
        return name
    if isinstance(node, cst.Integer):
        return node.value
    if isinstance(node, cst.Call) and not node.args:
        inner = dotted_name(node.func)
        return f"{inner}()" if inner else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return f"-{node.expression.value}"
    return None
