"""The fast walks visit exactly what LibCST's own visits do, in the same order."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import typing
from pathlib import Path
from typing import Sequence

import libcst as cst
import pytest

from trllint.core.cst import fields, walk

TRICKY = '''
@decorator(arg)
class A(Base, metaclass=M):
    x: int = 1
    async def f(self, a, /, b=2, *args, c: "T" = 3, **kw) -> R:
        async with ctx() as (y, z):
            return [i async for i in g() if i] or {k: v for k, v in d.items()}
    def g(self):
        try:
            yield from (a if b else c)
        except* ValueError as e:
            raise X from e
        finally:
            lambda q, *r: q[1:2, ::3]
        match p:
            case {"k": [1, *rest]} | Point(x=0) if rest:
                print(f"{a!r:>{width}} {b=}")
'''


def _sample_sources() -> list[str]:
    sources = [TRICKY]
    spec = importlib.util.find_spec("libcst")
    folder = Path(next(iter(spec.submodule_search_locations)))
    sources += [p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.py"))[:40]]
    return sources


class Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))


@pytest.mark.parametrize("index", range(len(_sample_sources())))
def test_children_and_order_match_libcst(index):
    module = cst.parse_module(_sample_sources()[index])
    pending = [module]
    while pending:
        node = pending.pop()
        assert [id(c) for c in walk.children(node)] == [id(c) for c in node.children], type(node).__name__
        pending.extend(node.children)
    theirs, ours = Recorder(), Recorder()
    module.visit(theirs)
    walk.visit(module, ours)
    assert ours.events == theirs.events


REPO = Path(__file__).resolve().parents[1]
# Real code of many shapes: every rule case (what the rules are written against) and trllint's own.
REAL_FILES = sorted(p for p in (REPO / "rules").rglob("*.py") if "cases" in p.parts) + sorted((REPO / "trllint").rglob("*.py"))


class Announced(cst.CSTVisitor):
    """The fields LibCST announces as it visits one node (``on_visit_attribute``), in order."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.node

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node:
            self.fields.append(attribute)


@pytest.mark.parametrize("chunk", range(4))
def test_the_child_field_table_holds_to_libcst_on_real_files(chunk):
    """For every node class met, in every combination of what its fields hold (nothing, an empty
    sequence, nodes): the children are ``node.children`` in their order, and the fields are
    those LibCST visits."""
    node_fields: dict[type, list[str]] = {}
    met: set[tuple[type, tuple[int, ...]]] = set()
    for path in REAL_FILES[chunk::4]:
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8"))
        except cst.ParserSyntaxError:
            continue  # a case for code that does not parse
        pending: list[cst.CSTNode] = [module]
        while pending:
            node = pending.pop()
            node_type = type(node)
            if node_type not in node_fields:
                node_fields[node_type] = [f.name for f in dataclasses.fields(node_type) if not f.name.startswith("_")]
            holding = tuple(fields._shape(getattr(node, name)) for name in node_fields[node_type])
            ours = walk.children(node)
            if (node_type, holding) not in met:
                met.add((node_type, holding))
                where = f"{path.relative_to(REPO)}: {node_type.__name__}"
                assert [id(c) for c in ours] == [id(c) for c in node.children], where
                expected_syntax = [id(c) for c in node.children if type(c) not in walk.TOKEN_TYPES]
                assert [id(c) for c in walk.syntax_children(node)] == expected_syntax, where
                announced = Announced(node)
                node.visit(announced)
                assert walk.child_fields(node) == tuple(announced.fields), where
            pending.extend(ours)
    assert len({node_type for node_type, _ in met}) > 50


def test_visit_false_skips_children_and_batched_calls_every_visitor():
    module = cst.parse_module("def f():\n    g(h(1))\nx = k(2)\n")

    class CallsOutsideFunctions(cst.CSTVisitor):
        def __init__(self) -> None:
            self.calls: list[str] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.calls.append(node.func.value)

    skipping = CallsOutsideFunctions()
    walk.visit(module, skipping)
    assert skipping.calls == ["k"]

    class Calls(cst.BatchableCSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def visit_Call(self, node: cst.Call) -> None:
            self.seen.append(f"+{node.func.value}")

        def leave_Call(self, original_node: cst.Call) -> None:
            self.seen.append(f"-{original_node.func.value}")

    first, second = Calls(), Calls()
    walk.visit_batched(module, [first, second])
    assert first.seen == second.seen == ["+g", "+h", "-h", "-g", "+k", "-k"]


def test_field_hooks_wrap_that_fields_children():
    module = cst.parse_module("match p:\n    case 1:\n        x = 2\n")

    class IntegersOutsidePatterns(cst.BatchableCSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.in_pattern = 0
            self.seen: list[tuple[str, bool]] = []

        def visit_MatchCase_pattern(self, node: cst.MatchCase) -> None:
            self.in_pattern += 1

        def leave_MatchCase_pattern(self, node: cst.MatchCase) -> None:
            self.in_pattern -= 1

        def visit_Integer(self, node: cst.Integer) -> None:
            self.seen.append((node.value, bool(self.in_pattern)))

    ours, theirs = IntegersOutsidePatterns(), IntegersOutsidePatterns()
    walk.visit_batched(module, [ours])
    cst.MetadataWrapper(module).visit_batched([theirs])
    assert ours.seen == theirs.seen == [("1", True), ("2", False)]


def test_field_hooks_come_for_the_fields_libcst_visits_empty_or_not():
    # FunctionDef announces its empty fields too; FormattedStringExpression visits its format spec
    # only when there is one.
    module = cst.parse_module('def f(a) -> int:\n    return f"{a:>{w}} {b}"\n')
    watched = {
        "FunctionDef": ("decorators", "type_parameters", "params", "returns", "body"),
        "FormattedStringExpression": ("expression", "equal", "format_spec"),
    }
    def recorder(hook: str):
        def record(self, node):
            self.events.append((hook, id(node)))

        record.__name__ = hook  # LibCST's batched visit finds hooks by their function's name
        return record

    hooks = [f"{way}_{node}_{field}" for node, watched_fields in watched.items() for field in watched_fields for way in ("visit", "leave")]
    Fields = type("Fields", (cst.BatchableCSTVisitor,), {hook: recorder(hook) for hook in [*hooks, "visit_Name"]})
    ours, theirs = Fields(), Fields()
    ours.events, theirs.events = [], []
    walk.visit_batched(module, [ours])
    cst.MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([theirs])
    assert ours.events == theirs.events
    assert ("visit_FunctionDef_type_parameters", id(module.body[0])) in ours.events
    assert sum(hook == "visit_FormattedStringExpression_format_spec" for hook, _ in ours.events) == 1


def test_token_types_hold_only_tokens():
    """A walk may skip a whitespace/punctuation subtree only if nothing else can be inside it."""
    assert {cst.SimpleWhitespace, cst.Newline, cst.Comment, cst.Comma, cst.Add, cst.LeftParen} <= walk.TOKEN_TYPES
    assert not walk.TOKEN_TYPES & {cst.Name, cst.Call, cst.Attribute, cst.SimpleStatementLine}
    for token_type in walk.TOKEN_TYPES:
        for field in dataclasses.fields(token_type):
            inside = walk.field_node_types(token_type, field.name) if field.type not in ("str", "bool", "int") else set()
            assert inside <= walk.TOKEN_TYPES, (token_type.__name__, field.name, inside - walk.TOKEN_TYPES)


def test_token_types_are_every_whitespace_and_operator_class():
    # Named by their public bases; LibCST keeps these classes in two modules of their own.
    kept_apart = {
        t for t in fields._subclasses(cst.CSTNode)
        if t.__module__ in ("libcst._nodes.whitespace", "libcst._nodes.op") and getattr(cst, t.__name__, None) is t
    }
    assert len(kept_apart) > 50 and kept_apart <= walk.TOKEN_TYPES
    assert all(t.__module__ in ("libcst._nodes.whitespace", "libcst._nodes.op") or t.__name__.endswith(
        ("Paren", "Bracket", "Brace")) for t in walk.TOKEN_TYPES)  # fmt: skip


def _node_classes_in(hint: object) -> set[type]:
    found: set[type] = set()
    pending = [hint]
    while pending:
        current = pending.pop()
        if isinstance(current, type) and issubclass(current, cst.CSTNode):
            found.add(current)
        pending.extend(typing.get_args(current))
    return found


def test_field_node_types_are_the_classes_the_evaluated_annotations_name():
    # field_node_types reads LibCST's annotations as the dataclass holds them, not through
    # typing.get_type_hints (a tenth of the cost): the answers must be get_type_hints' own.
    for node_type in fields._subclasses(cst.CSTNode):
        for name, hint in typing.get_type_hints(node_type).items():
            assert walk.field_node_types(node_type, name) == _node_classes_in(hint), (node_type, name)


@dataclasses.dataclass(frozen=True)
class _NodeWithForwardReferences:
    value: "cst.Name"
    items: Sequence["cst.Comma"]
    name: cst.Name


# Annotations as objects, one reference inside them a string (this module's own annotations are
# all strings: `from __future__ import annotations`).
_NodeWithANestedForwardReference = dataclasses.dataclass(
    type("_NodeWithANestedForwardReference", (), {"__module__": __name__, "__annotations__": {"value": cst.Name, "items": Sequence["cst.Comma"]}})
)


def test_field_node_types_evaluates_forward_references():
    assert walk.field_node_types(_NodeWithForwardReferences, "value") == {cst.Name}
    assert walk.field_node_types(_NodeWithForwardReferences, "items") == {cst.Comma}
    assert walk.field_node_types(_NodeWithForwardReferences, "name") == {cst.Name}
    assert walk.field_node_types(_NodeWithANestedForwardReference, "items") == {cst.Comma}
    assert walk.field_node_types(_NodeWithANestedForwardReference, "value") == {cst.Name}


def _recorder_of(node_types: list[type], base: type) -> type:
    """A visitor class with a visit_X and leave_X for each of ``node_types`` (and nothing else)."""

    def methods(name: str) -> dict:
        def enter(self, node):
            self.events.append(("visit", name, id(node)))

        def leave(self, original_node):
            self.events.append(("leave", name, id(original_node)))

        return {f"visit_{name}": enter, f"leave_{name}": leave}

    namespace: dict = {}
    for node_type in node_types:
        namespace.update(methods(node_type.__name__))
    return type("Recorder", (base,), namespace)


_CONCRETE = sorted(
    {t for t in fields._subclasses(cst.CSTNode) if not inspect.isabstract(t) and getattr(cst, t.__name__, None) is t},
    key=lambda t: t.__name__,
)


@pytest.mark.parametrize("index", range(0, len(_sample_sources()), 4))
@pytest.mark.parametrize("hooked", ["syntax", "with_tokens"])
def test_a_walk_skips_tokens_only_when_no_visitor_hooks_them(index, hooked):
    module = cst.parse_module(_sample_sources()[index])
    types = [t for t in _CONCRETE if t not in walk.TOKEN_TYPES]
    if hooked == "with_tokens":
        types.append(cst.Comma)
    plain = _recorder_of(types, cst.CSTVisitor)
    batchable = _recorder_of(types, cst.BatchableCSTVisitor)
    theirs = plain()
    theirs.events = []
    module.visit(theirs)
    ours = plain()
    ours.events = []
    walk.visit(module, ours)
    assert ours.events == theirs.events
    batched = batchable()
    batched.events = []
    walk.visit_batched(module, [batched])
    assert batched.events == theirs.events
    if hooked == "syntax":
        assert not any(event[1] == "Comma" for event in theirs.events)


def test_syntax_children_are_children_less_tokens():
    module = cst.parse_module(TRICKY)
    pending = [module]
    while pending:
        node = pending.pop()
        expected = [c for c in node.children if type(c) not in walk.TOKEN_TYPES]
        assert [id(c) for c in walk.syntax_children(node)] == [id(c) for c in expected], type(node).__name__
        pending.extend(node.children)


STATEMENT_SOURCE = TRICKY + '''
if a:
    x = 1
elif b:
    def h(): return 2
else:
    y: int = 3
for i in r: z = i
else:
    w = 0
while t:
    pass
else:
    del v
with c() as m, d(): import os; from . import q
try:
    global g
except E:
    nonlocal n
else:
    assert a
finally:
    class K: v = 1
'''


def _statements_by_walk(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Everything(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.SimpleStatementLine)):
                found.append(node)
            return True

    module.visit(Everything())
    return found


@pytest.mark.parametrize("index", range(41))
def test_statements_are_those_a_full_walk_meets_in_its_order(index):
    source = STATEMENT_SOURCE if index == 0 else _sample_sources()[index]
    module = cst.parse_module(source)
    expected = _statements_by_walk(module)
    assert [id(n) for n in walk.statements(module)] == [id(n) for n in expected]
    if index == 0:
        kinds = {type(n).__name__ for n in expected}
        expected_kinds = {"FunctionDef", "AnnAssign", "Del", "Global", "Nonlocal", "Assert", "Match", "Try", "TryStar"}
        assert expected_kinds | {"ImportFrom"} <= kinds


def _names_by_walk(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            names.add(node.attr.value)

    node.visit(Names())
    return names


@pytest.mark.parametrize("index", range(41))
def test_identifiers_are_every_name_and_attribute_name(index):
    module = cst.parse_module(STATEMENT_SOURCE if index == 0 else _sample_sources()[index])
    assert walk.identifiers(module) == _names_by_walk(module)
    for statement in walk.statements(module)[:60]:
        assert walk.identifiers(statement) == _names_by_walk(statement)


@pytest.mark.parametrize("index", range(41))
def test_statements_of_one_scope_leave_out_what_its_definitions_hold(index):
    module = cst.parse_module(STATEMENT_SOURCE if index == 0 else _sample_sources()[index])
    scopes = [module, *(n for n in walk.statements(module) if isinstance(n, cst.FunctionDef))]
    for scope in scopes[:30]:
        found: list[cst.CSTNode] = []

        class OneScope(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                if node is scope:
                    return True
                if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.SimpleStatementLine)):
                    found.append(node)
                return not isinstance(node, (cst.FunctionDef, cst.ClassDef))

        scope.visit(OneScope())
        assert [id(n) for n in walk.statements(scope, into_definitions=False)] == [id(n) for n in found]


@pytest.mark.parametrize("index", range(41))
def test_nodes_of_types_are_those_a_walk_meets_not_entering_the_skipped(index):
    module = cst.parse_module(STATEMENT_SOURCE if index == 0 else _sample_sources()[index])
    scopes = walk.node_types(cst.FunctionDef, cst.ClassDef, cst.Lambda)
    functions = [n for n in walk.statements(module) if isinstance(n, cst.FunctionDef)]
    for root in [module, *functions[:20]]:
        for wanted, skipped in (
            (walk.node_types(cst.Call), scopes),
            (walk.node_types(cst.Call), frozenset()),
            (walk.node_types(cst.Assign, cst.If), scopes),
        ):
            found: list[cst.CSTNode] = []

            class Collect(cst.CSTVisitor):
                def on_visit(self, node: cst.CSTNode) -> bool:
                    if type(node) in wanted:
                        found.append(node)
                    return node is root or type(node) not in skipped

            root.visit(Collect())
            assert [id(n) for n in walk.of_types(root, wanted, skipped)] == [id(n) for n in found]


# Classes the hot helpers compare with `is` (dotted_name, assigned_names, loose_name, ...): a class
# something derived from would make `type(node) is C` miss nodes that `isinstance` finds.
LEAF_CLASSES = (
    cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Tuple, cst.List, cst.StarredElement, cst.Expr,
    cst.Return, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef,
)


def test_exact_type_tests_answer_as_isinstance_does():
    for leaf in LEAF_CLASSES:
        assert not fields._subclasses(leaf), f"{leaf.__name__} has subclasses: compare it with isinstance"
    bases = (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.BaseSuite, cst.BaseExpression, cst.ExceptHandler)
    module = cst.parse_module(TRICKY)
    pending: list[cst.CSTNode] = [module]
    seen = 0
    while pending:
        node = pending.pop()
        for base in bases:
            assert (type(node) in walk.node_types(base)) == isinstance(node, base), (type(node).__name__, base)
        for leaf in LEAF_CLASSES:
            assert (type(node) is leaf) == isinstance(node, leaf)
        seen += 1
        pending.extend(node.children)
    assert seen > 300

