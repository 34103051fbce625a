"""The names a file's code calls, reads as attributes and defines, from CPython's tree.

What a rule's prefilter asks before LibCST parses the file (``trllint.core.prefilter.Calls``,
``Reads``, ``Defines``): text finds ``gather`` in ``all_gather``, a comment or a docstring, the
tree only where the code calls it. CPython's tree costs a tenth of LibCST's parse, and the file
that passes needs it anyway (the syntax check, the positions of its findings).
"""

from __future__ import annotations

import ast

from trllint.core.ast_walk import FIELDS, dotted_name, node_fields
from dataclasses import dataclass


@dataclass(frozen=True)
class CodeNames:
    # `f` for `f(...)`, `m` for `x.m(...)`; for a name an import binds under another name
    # (`from accelerate.utils import gather as g`), the imported name too: `g(...)` calls `gather`.
    calls: frozenset[str]
    # `m` for every `x.m`, read or written, called or not; and the dotted parts of an import's
    # module (`import a.m`, `from a.m import f`), which LibCST's tree spells as attributes too.
    attributes: frozenset[str]
    functions: frozenset[str]  # every `def` (and `async def`), nested ones and methods too
    # The whole dotted name of each call whose callee is a name or a chain of attributes on one
    # (`helper`, `utils.helper`, `self.m`): where a call leads in the project (``Reached``).
    dotted_calls: frozenset[str] = frozenset()


# The node classes whose names are read; every other node is only descended into.
_READ = frozenset({ast.Attribute, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom})


def code_names(tree: ast.AST) -> CodeNames:
    # Asked of every file whose text passes a rule's text parts: the names are read in the walk
    # itself (`ast_walk.node_fields`), node classes compared with `is`, and most nodes (names,
    # constants, operators) pass one set test before their children are read.
    calls: set[str] = set()
    dotted_calls: set[str] = set()
    attributes: set[str] = set()
    functions: set[str] = set()
    imported_as: dict[str, set[str]] = {}  # an alias may be bound by several imports (one in a function)
    pending: list[ast.AST] = [tree]
    node_class = ast.AST
    fields_of = FIELDS
    while pending:
        node = pending.pop()
        node_type = type(node)
        if node_type in _READ:
            if node_type is ast.Attribute:
                attributes.add(node.attr)  # type: ignore[attr-defined]
            elif node_type is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if type(func) is ast.Attribute:
                    calls.add(func.attr)
                    dotted = dotted_name(func)
                    if dotted is not None:
                        dotted_calls.add(dotted)
                elif type(func) is ast.Name:
                    calls.add(func.id)
                    dotted_calls.add(func.id)
            elif node_type is ast.FunctionDef or node_type is ast.AsyncFunctionDef:
                functions.add(node.name)  # type: ignore[attr-defined]
            else:  # an import
                module = node.module if node_type is ast.ImportFrom else None  # type: ignore[attr-defined]
                for dotted in [module or "", *(alias.name for alias in node.names)]:  # type: ignore[attr-defined]
                    attributes.update(dotted.split(".")[1:])
                for alias in node.names:  # type: ignore[attr-defined]
                    if alias.asname:
                        imported_as.setdefault(alias.asname, set()).add(alias.name.rsplit(".", 1)[-1])
        fields = fields_of.get(node_type)
        if fields is None:
            fields = node_fields(node_type)
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, node_class):
                        pending.append(child)
            elif isinstance(value, node_class):
                pending.append(value)
    calls.update(*(imported_as[name] for name in calls.intersection(imported_as)))
    return CodeNames(frozenset(calls), frozenset(attributes), frozenset(functions), frozenset(dotted_calls))
