"""The fast walks visit exactly what LibCST's own visits do, in the same order."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import libcst as cst
import pytest

from trllint.analysis import walk

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
