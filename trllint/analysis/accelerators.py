"""Whether an expression is accelerate's ``Accelerator``: the receiver of ``prepare``,
``prepare_model``, ``unwrap_model``, ``gather_for_metrics`` and friends.

By name first (``accelerator``, ``self.accelerator``, ``trainer.accelerator``, ``self._accelerator``),
then by binding: a name or ``self`` attribute assigned ``Accelerator(...)`` (or an accelerator by
name) in the enclosing function, class or module. Reading source only, so a value handed in
under another name (``def f(acc): acc.prepare_model(...)``) is not recognised.
"""

from __future__ import annotations

import libcst as cst

from trllint.analysis import walk
from trllint.analysis.context import NodeContext, imports_of
from trllint.analysis.names import ImportMap, assigned_names, call_name, dotted_name, matches


def is_accelerator(expression: cst.BaseExpression, context: NodeContext) -> bool:
    imports = imports_of(context.source)
    if _is_accelerator_by_name_or_call(expression, imports):
        return True
    name = dotted_name(expression)
    if name is None:
        return False
    scopes: list[cst.CSTNode] = []
    if name.startswith("self.") and name.count(".") == 1:
        cls = context.enclosing_class(expression)
        if cls is not None:
            scopes.append(cls)
    elif "." not in name:
        function = context.enclosing_function(expression)
        if function is not None:
            scopes.append(function)
        scopes.append(context.source.module)
    return any(name in _names_bound_to_accelerators(scope, context) for scope in scopes)


def _is_accelerator_by_name_or_call(expression: cst.BaseExpression, imports: ImportMap) -> bool:
    if isinstance(expression, cst.Call):
        return matches(imports.resolve(call_name(expression)), "accelerate.Accelerator", "Accelerator")
    name = dotted_name(expression)
    return name is not None and "accelerator" in name.rsplit(".", 1)[-1].lower()


def _names_bound_to_accelerators(scope: cst.CSTNode, context: NodeContext) -> set[str]:
    """Names assigned an accelerator anywhere in ``scope`` (the module's answer is kept per file)."""
    is_module = scope is context.source.module
    if is_module and "accelerator_names" in context.source.facts:
        return context.source.facts["accelerator_names"]
    imports = imports_of(context.source)
    bound: set[str] = set()

    class Assignments(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if _is_accelerator_by_name_or_call(node.value, imports):
                for target in node.targets:
                    bound.update(assigned_names(target.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None and _is_accelerator_by_name_or_call(node.value, imports):
                bound.update(assigned_names(node.target))

    walk.visit(scope, Assignments())
    if is_module:
        context.source.facts["accelerator_names"] = bound
    return bound
