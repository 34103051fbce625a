"""Which functions of a file pass one of their parameters on to a sink, followed transitively.

A sink is a call that must not receive a certain value (``deepspeed.initialize(model=None)``).
A function defined in the same file that hands its own parameter to a sink, with no guard on the
way, is a sink too, for that parameter; so is a function that hands it to such a function, and
so on. The summary is computed once per file and settings, however many calls ask.

A function defined in the file always wins over a built-in sink of the same name: a local
``prepare_deepspeed`` that returns early on None is not a sink.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from trllint.analysis.names import ImportMap, argument, call_name, dotted_name, matches
from trllint.analysis.nullness import NullnessAnalysis, all_params

_ASSUME_NONE = frozenset({"assumed None"})


@dataclass(frozen=True)
class Sink:
    """Calls named ``name`` must not get None as argument ``keyword`` (or at ``position``)."""

    name: str
    keyword: str
    position: int | None
    # The functions the value passes through before the real sink, for messages.
    via: tuple[str, ...] = ()
    local: bool = False  # defined in this file: matched by exact name, not by suffix

    def accepts(self, call: cst.Call, imports: ImportMap) -> bool:
        name = call_name(call)
        if self.local:
            return name == self.name
        return matches(imports.resolve(name), self.name)


@dataclass
class FileSinks:
    sinks: list[Sink]
    # How the file's own functions are called: such a call is judged by their summary alone.
    local_names: frozenset[str] = frozenset()

    def matching(self, call: cst.Call, imports: ImportMap) -> list[Sink]:
        if call_name(call) in self.local_names:
            return [s for s in self.sinks if s.local and s.accepts(call, imports)]
        return [s for s in self.sinks if not s.local and s.accepts(call, imports)]


def local_functions(module: cst.Module) -> dict[str, tuple[cst.FunctionDef, bool]]:
    """How each function of the file is called (``f`` or ``self.f``), and whether it takes self."""
    functions: dict[str, tuple[cst.FunctionDef, bool]] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            functions.setdefault(statement.name.value, (statement, False))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    static = any(dotted_name(d.decorator) == "staticmethod" for d in member.decorators)
                    functions.setdefault(f"self.{member.name.value}", (member, not static))
    return functions


def summarise_sinks(
    module: cst.Module,
    imports: ImportMap,
    base: list[Sink],
    parent_of: Callable[[cst.CSTNode], cst.CSTNode | None],
) -> FileSinks:
    """``base`` plus every same-file function that forwards a parameter to a sink unguarded."""
    functions = local_functions(module)
    calls = {key: _calls_in(function) for key, (function, _) in functions.items()}
    analysis = NullnessAnalysis(parent_of, module)
    sinks = FileSinks(list(base), frozenset(functions))
    known: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for key, (function, takes_self) in functions.items():
            params = [p.name.value for p in all_params(function.params)]
            positional = params[1:] if takes_self else params
            for call in calls[key]:
                for sink in sinks.matching(call, imports):
                    arg = argument(call, sink.keyword, sink.position)
                    passed = dotted_name(arg.value) if arg is not None else None
                    if passed not in positional or (key, passed) in known:
                        continue
                    if not analysis.none_reasons(passed, call, assume_at_entry=_ASSUME_NONE):
                        continue  # guarded (or reassigned) on every path to the sink
                    known.add((key, passed))
                    short = key.rsplit(".", 1)[-1]
                    via = (f"{short}()", *sink.via)
                    sinks.sinks.append(Sink(key, passed, positional.index(passed), via, local=True))
                    changed = True
    return sinks


def _calls_in(function: cst.FunctionDef) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    function.body.visit(Calls())
    return found
