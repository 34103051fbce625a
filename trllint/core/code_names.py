"""The names a file's code calls, reads as attributes and defines, from CPython's tree.

What a rule's prefilter asks before LibCST parses the file (``trllint.core.prefilter.Calls``,
``Reads``, ``Defines``): text finds ``gather`` in ``all_gather``, a comment or a docstring, the
tree only where the code calls it. CPython's tree costs a tenth of LibCST's parse, and the file
that passes needs it anyway (the syntax check, the positions of its findings).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from trllint.core.ast_walk import dotted_name, node_fields


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


def code_names(tree: ast.AST) -> CodeNames:
    # Asked of every file whose text passes a rule's text parts: the names are read in the walk
    # itself (`ast_walk.node_fields`), node classes compared with `is`.
    calls: set[str] = set()
    dotted_calls: set[str] = set()
    attributes: set[str] = set()
    functions: set[str] = set()
    imported_as: dict[str, set[str]] = {}  # an alias may be bound by several imports (one in a function)
    pending: list[ast.AST] = [tree]
    node_class = ast.AST
    while pending:
        node = pending.pop()
        if type(node) is ast.Attribute:
            attributes.add(node.attr)
        elif type(node) is ast.Call:
            func = node.func
            if type(func) is ast.Attribute:
                calls.add(func.attr)
                dotted = dotted_name(func)
                if dotted is not None:
                    dotted_calls.add(dotted)
            elif type(func) is ast.Name:
                calls.add(func.id)
                dotted_calls.add(func.id)
        elif type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef:
            functions.add(node.name)
        elif type(node) is ast.Import or type(node) is ast.ImportFrom:
            module = node.module if type(node) is ast.ImportFrom else None
            for dotted in [module or "", *(alias.name for alias in node.names)]:
                attributes.update(dotted.split(".")[1:])
            for alias in node.names:
                if alias.asname:
                    imported_as.setdefault(alias.asname, set()).add(alias.name.rsplit(".", 1)[-1])
        for field in node_fields(type(node)):
            value = getattr(node, field, None)
            for child in value if type(value) is list else (value,):
                if isinstance(child, node_class):
                    pending.append(child)
    calls.update(*(imported_as[name] for name in calls.intersection(imported_as)))
    return CodeNames(frozenset(calls), frozenset(attributes), frozenset(functions), frozenset(dotted_calls))
