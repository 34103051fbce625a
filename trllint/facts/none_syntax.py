"""What one piece of code says about None, before any flow is followed: a parameter that may be
None, a test that rules None in or out, a statement that would raise on None, a call that may
return None. ``trllint.facts.nullness`` follows these along a function's paths.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import call_name, dotted_name, is_none, last_attribute

Reasons = frozenset[str]  # why a name may be None, for messages; empty: no reason is known
NOTHING: Reasons = frozenset()


def parameter_none_reasons(param: cst.Param) -> Reasons:
    name = param.name.value
    if param.default is not None and is_none(param.default):
        return frozenset({f"parameter `{name}` defaults to None"})
    if param.annotation is not None and annotation_admits_none(param.annotation.annotation):
        return frozenset({f"parameter `{name}` is annotated Optional"})
    return NOTHING


def annotation_admits_none(annotation: cst.BaseExpression) -> bool:
    if is_none(annotation):
        return True
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else ""
        try:
            return annotation_admits_none(cst.parse_expression(text))
        except cst.ParserSyntaxError:
            return False
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return annotation_admits_none(annotation.left) or annotation_admits_none(annotation.right)
    if isinstance(annotation, cst.Subscript):
        head = last_attribute(dotted_name(annotation.value))
        if head == "Optional":
            return True
        if head == "Union":
            return any(
                isinstance(e.slice, cst.Index) and annotation_admits_none(e.slice.value) for e in annotation.slice
            )
    return False


def none_test_outcome(test: cst.BaseExpression, name: str, truth: bool) -> str | None:
    """What ``test`` being ``truth`` says of ``name``: "not-none", "none", or nothing."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return none_test_outcome(test.expression, name, not truth)
    if isinstance(test, cst.BooleanOperation):
        # `a and b` true: both hold; `a or b` false: neither holds. Otherwise nothing is known.
        both = isinstance(test.operator, cst.And) == truth
        if both:
            outcomes = {none_test_outcome(side, name, truth) for side in (test.left, test.right)}
            for outcome in ("not-none", "none"):
                if outcome in outcomes:
                    return outcome
            return None
        left, right = (none_test_outcome(side, name, truth) for side in (test.left, test.right))
        return left if left == right else None
    if dotted_name(test) == name:
        return "not-none" if truth else None
    if isinstance(test, cst.Call):
        callee = call_name(test)
        if callee in ("isinstance", "bool", "callable") and test.args and dotted_name(test.args[0].value) == name:
            return "not-none" if truth else None
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        operands = (test.left, target.comparator)
        if not any(is_none(o) for o in operands) or not any(dotted_name(o) == name for o in operands):
            return None
        if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
            return "not-none" if truth else "none"
        if isinstance(target.operator, (cst.Is, cst.Equal)):
            return "none" if truth else "not-none"
    return None


class _PartsThatAlwaysRun(cst.CSTVisitor):
    """Visits only what runs whenever the statement does: the left operand of ``and``/``or``
    and a conditional expression's test, never lambdas or comprehensions."""

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> bool:
        walk.visit(node.left, self)
        return False

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        walk.visit(node.test, self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False


def dereferences(node: cst.CSTNode, name: str) -> bool:
    """``node`` always reads an attribute or item of ``name``, or calls it (None would raise).

    Parts that may not run (either side of ``and``/``or``, a conditional expression's branches,
    lambdas, comprehensions) do not count; nor does ``getattr(name, ...)``/``hasattr``, which
    tolerate None (``getattr(name.sub, ...)`` still reads ``name.sub``).
    """
    finder = _Dereferences(name)
    walk.visit(node, finder)
    return finder.found


class _Dereferences(_PartsThatAlwaysRun):
    # A class of its own, not one per call: asked of every statement after a possible None.
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.found = False

    def visit_Attribute(self, attribute: cst.Attribute) -> bool:
        self.found = self.found or dotted_name(attribute.value) == self.name
        return not self.found

    def visit_Subscript(self, subscript: cst.Subscript) -> bool:
        self.found = self.found or dotted_name(subscript.value) == self.name
        return not self.found

    def visit_Call(self, call: cst.Call) -> bool:
        self.found = self.found or dotted_name(call.func) == self.name
        if self.found or call_name(call) not in ("getattr", "hasattr"):
            return not self.found
        walk.visit(call.func, self)
        for position, arg in enumerate(call.args):
            if not (position == 0 and dotted_name(arg.value) == self.name):
                walk.visit(arg.value, self)
        return False


# Calls that raise when handed None as their first argument (accelerate's prepare_model reads
# `model.modules()` before anything else: "'NoneType' object has no attribute 'modules'").
REQUIRES_A_MODEL = ("prepare_model",)


def fails_on_none(statement: cst.CSTNode, name: str) -> bool:
    """Running ``statement`` raises when ``name`` is None: it dereferences ``name``, or always
    hands it first to a call of ``REQUIRES_A_MODEL``."""
    finder = _FailsOnNone(name)
    walk.visit(statement, finder)
    return finder.found


class _FailsOnNone(_Dereferences):
    """``dereferences``, and in the same walk a call of ``REQUIRES_A_MODEL`` handed ``name`` first."""

    def visit_Call(self, call: cst.Call) -> bool:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if last_attribute(call_name(call)) in REQUIRES_A_MODEL and positional:
            self.found = self.found or dotted_name(positional[0].value) == self.name
        return super().visit_Call(call)


def returns_none_sometimes(call: cst.Call) -> str | None:
    """Why a call may return None: ``d.get(k)``, ``getattr(o, "a", None)``."""
    name = call_name(call)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if name == "getattr" and len(positional) == 3 and is_none(positional[2].value):
        return "`getattr(..., None)` returns None when the attribute is missing"
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "get":
        if len(positional) == 1 or (len(positional) == 2 and is_none(positional[1].value)):
            return "`.get(...)` returns None for a missing key"
    return None
