"""Whether an expression is accelerate's ``Accelerator``: the receiver of ``prepare``,
``prepare_model``, ``unwrap_model``, ``gather_for_metrics`` and friends.

By name first (``accelerator``, ``self.accelerator``, ``trainer.accelerator``, ``self._accelerator``),
then by binding: a name or ``self`` attribute assigned ``Accelerator(...)`` (or an accelerator by
name) in the enclosing function, class or module. Reading source only, so a value handed in
under another name (``def f(acc): acc.prepare_model(...)``) is not recognised.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import libcst as cst

from trllint.core.cst import walk
from trllint.semantic.context import NodeContext, methods_of
from trllint.semantic.model import SemanticModel, imports_of
from trllint.core.cst.names import ImportMap, assigned_names, assignment_targets, call_name, dotted_name, matches, parameter_names
from trllint.core.prefilter import AnyOf
from trllint.semantic.project.summaries import ModuleFact, top_level_classes
from trllint.semantic.project.file_view import project_view

# What a class must spell to hold an accelerator in an attribute (``ClassFacts.self_attributes``:
# ``self.x = Accelerator(...)`` or an ``accelerator`` property): a base module without it is
# not parsed for one.
_HOLDS_AN_ACCELERATOR = AnyOf("Accelerator", "def accelerator")


def _accelerator_attributes(model: SemanticModel) -> dict[str, str]:
    """Class name -> the ``self`` attribute its methods bind to an accelerator
    (``self.accelerator`` first); a class that binds none is left out."""
    answer: dict[str, str] = {}
    for cls in top_level_classes(model):
        bound = sorted(name for name, is_accelerator in model.class_facts(cls).self_attributes.items() if is_accelerator)
        answer.pop(cls.name.value, None)  # a later class of the name wins, as Python binds it
        if bound:
            answer[cls.name.value] = "self.accelerator" if "self.accelerator" in bound else bound[0]
    return answer


# The attribute holding a module's classes' accelerator: asked of a base class in another module.
ACCELERATOR_ATTRIBUTES = ModuleFact("accelerators.self-attribute", 1, _accelerator_attributes)


def is_accelerator(expression: cst.BaseExpression, context: NodeContext) -> bool:
    imports = imports_of(context.source)
    if _is_accelerator_by_name_or_call(expression, imports):
        return True
    name = dotted_name(expression)
    if name is None or name not in _names_bound_to_accelerators(context.source.module, context):
        # The file's answer holds every scope's assignments: a name none of them binds to an
        # accelerator is none wherever the expression sits (asked without a parent map).
        return False
    if name.startswith("self.") and name.count(".") == 1:
        cls = context.enclosing_class(expression)
        return cls is not None and name in _names_bound_to_accelerators(cls, context)
    # A plain name: its function's assignments are among the file's, which answered above.
    return "." not in name


def _is_accelerator_by_name_or_call(expression: cst.BaseExpression, imports: ImportMap) -> bool:
    if isinstance(expression, cst.Call):
        return matches(imports.resolve(call_name(expression)), "accelerate.Accelerator", "Accelerator")
    name = dotted_name(expression)
    return name is not None and names_an_accelerator(name)


def names_an_accelerator(name: str) -> bool:
    """A dotted name that holds an accelerator by its name alone (``self.accelerator``, ``acc.ACCELERATOR``);
    also asked of CPython's tree before LibCST parses a file (TRL009's prefilter)."""
    return "accelerator" in name.rsplit(".", 1)[-1].lower()


def _names_bound_to_accelerators(scope: cst.CSTNode, context: NodeContext) -> frozenset[str] | set[str]:
    """Names assigned an accelerator anywhere in ``scope``. The module's and a class's answers are
    read from the assignments the shared walk found, once each; a function's walks it."""
    model = SemanticModel.of(context.source)
    if scope is context.source.module:
        return model.once((names_bound_to_accelerators,), lambda: _bound_in(model.assignments, model.imports))
    if isinstance(scope, cst.ClassDef):
        return model.once(
            (names_bound_to_accelerators, id(scope)),
            lambda: _bound_in(model.class_facts(scope).contents.assignments, model.imports),
        )
    return names_bound_to_accelerators(scope, model.imports)


def names_bound_to_accelerators(scope: cst.CSTNode, imports: ImportMap) -> set[str]:
    assignments = _AcceleratorAssignments(imports)
    walk.visit(scope, assignments)
    return assignments.bound


def _bound_in(assignments: Iterable[cst.Assign | cst.AnnAssign], imports: ImportMap) -> frozenset[str]:
    """``names_bound_to_accelerators`` of a scope, from its assignments."""
    return frozenset(name for node in assignments for name in _names_assigned_an_accelerator(node, imports))


def _names_assigned_an_accelerator(node: cst.Assign | cst.AnnAssign, imports: ImportMap) -> list[str]:
    """The names one assignment binds to an accelerator (none when its value is no accelerator)."""
    if node.value is None or not _is_accelerator_by_name_or_call(node.value, imports):
        return []
    return [name for target in assignment_targets(node) for name in assigned_names(target)]


class _AcceleratorAssignments(cst.CSTVisitor):
    # A class of the module, not one made per call (a class made per call is a reference cycle
    # that holds what it read until the collector runs).
    def __init__(self, imports: ImportMap) -> None:
        super().__init__()
        self.imports = imports
        self.bound: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self.bound.update(_names_assigned_an_accelerator(node, self.imports))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bound.update(_names_assigned_an_accelerator(node, self.imports))


# ---- which accelerator a fix may name at a node ------------------------------------------------

# Library packages whose Trainer classes set ``self.accelerator`` (transformers' Trainer does in
# ``create_accelerator_and_postprocess``; TRL's trainers inherit it).
_LIBRARIES_WITH_TRAINER_ACCELERATOR = ("transformers", "trl")
_ALWAYS_LEAVES = (cst.Return, cst.Raise, cst.Continue, cst.Break)
# The nodes that hold a sequence of statements (``body``).
_Block = cst.IndentedBlock | cst.Module | cst.SimpleStatementLine | cst.SimpleStatementSuite
_BLOCK_TYPES = (cst.IndentedBlock, cst.Module, cst.SimpleStatementLine, cst.SimpleStatementSuite)


class _Everything(frozenset[str]):
    """The names bound after a block that never falls through: any name (it cannot reach here)."""


_EVERYTHING = _Everything()


def accelerator_at(node: cst.CSTNode, context: NodeContext) -> str | None:
    """The accelerator expression a fix may write at ``node``, or None when none is provably bound.

    ``self.<attr>`` in a method when the class, a base class of the same file or of another module
    of the project, or a known library base (transformers' ``Trainer``, TRL's trainers) sets it;
    else a local name bound to an accelerator on every path before ``node``; else a module-level
    one bound before the function is defined (and not shadowed by a local of the same name).
    """
    cls = context.enclosing_class(node)
    if cls is not None:
        attribute = self_accelerator_of(cls, context)
        if attribute is not None:
            return attribute
    function = context.enclosing_function(node)
    imports = imports_of(context.source)
    if function is not None:
        local = _bound_before(node, function, context, imports)
        if local:
            return sorted(local)[0]
        parameters = parameter_names(function.params)
        named = [p for p in parameters if _is_accelerator_by_name_or_call(cst.Name(p), imports)]
        if named:
            return named[0]
        shadowed = _names_bound_to_accelerators(function, context) | set(parameters) | _assigned_anywhere(function)
        top = _top_level_statement(function, context)
        module_names = _bound_before(top, context.source.module, context, imports) if top is not None else set()
        module_names = {name for name in module_names if name not in shadowed}
    else:
        module_names = _bound_before(node, context.source.module, context, imports)
    return sorted(module_names)[0] if module_names else None


def self_accelerator_of(cls: cst.ClassDef, context: NodeContext, seen: frozenset[int] = frozenset()) -> str | None:
    """``self.accelerator`` (or another ``self`` attribute) that the class provably holds."""
    if id(cls) in seen:
        return None
    model = SemanticModel.of(context.source)
    imports = model.imports
    assigned = model.class_facts(cls).self_attributes
    if "self.accelerator" in assigned:
        return "self.accelerator"
    bound = sorted(name for name, value in assigned.items() if value)
    if bound:
        return bound[0]
    classes = {s.name.value: s for s in context.source.module.body if isinstance(s, cst.ClassDef)}
    for base in cls.bases:
        name = dotted_name(base.value)
        if name is None:
            continue
        if name in classes:
            found = self_accelerator_of(classes[name], context, seen | {id(cls)})
            if found is not None:
                return found
            continue
        full = imports.resolve(name) or ""
        if full != name and full.split(".")[0] in _LIBRARIES_WITH_TRAINER_ACCELERATOR and full.endswith("Trainer"):
            return "self.accelerator"
    project = project_view(model)
    if project is not None and cls.bases:
        # A base in another module of the project that holds one (nearest first).
        for definition in project.base_classes(cls):
            answer = project.fact(definition, ACCELERATOR_ATTRIBUTES, deep_if=_HOLDS_AN_ACCELERATOR)
            if answer is not None and definition.name in answer:
                return str(answer[definition.name])
    return None


def _assigned_anywhere(function: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class Targets(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                names.update(assigned_names(target.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(assigned_names(node.target))

    walk.visit(function.body, Targets())
    return names


def _top_level_statement(node: cst.CSTNode, context: NodeContext) -> cst.CSTNode | None:
    child = node
    for ancestor in context.ancestors(node):
        if isinstance(ancestor, cst.Module):
            return child
        child = ancestor
    return None


def _bound_before(node: cst.CSTNode, scope: cst.CSTNode, context: NodeContext, imports: ImportMap) -> set[str]:
    """Accelerator names bound on every path from the start of ``scope`` to ``node``.

    Along the chain of blocks that hold ``node``, every statement before it in its block has run;
    an ``if`` binds what both arms bind (an arm that always leaves binds anything).
    """
    bound: set[str] = set()
    child = node
    model = SemanticModel.of(context.source)
    for ancestor in context.ancestors(node):
        if isinstance(ancestor, _BLOCK_TYPES):
            index_of, prefixes = model.once((_block_prefixes, ancestor), lambda: _block_prefixes(ancestor, imports))
            bound |= prefixes[index_of.get(id(child), len(prefixes) - 1)]
        if ancestor is scope or isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        child = ancestor
    return bound


def _block_prefixes(block: _Block, imports: ImportMap) -> tuple[dict[int, int], list[set[str]]]:
    """For each statement of ``block``, what the statements before it bind (index by ``id``);
    worked out once per block, so asking at every statement of a long block stays linear."""
    index_of: dict[int, int] = {}
    prefixes: list[set[str]] = [set()]
    for index, statement in enumerate(block.body):
        index_of[id(statement)] = index
        prefixes.append(prefixes[-1] | _binds(statement, imports))
    return index_of, prefixes


def _binds(statement: cst.CSTNode, imports: ImportMap) -> frozenset[str]:
    """Accelerator names that every path falling out of ``statement`` has bound."""
    if isinstance(statement, _ALWAYS_LEAVES):
        return _EVERYTHING
    if isinstance(statement, (cst.Assign, cst.AnnAssign)) and statement.value is not None:
        if not _is_accelerator_by_name_or_call(statement.value, imports):
            return frozenset()
        targets = statement.targets if isinstance(statement, cst.Assign) else [statement]
        return frozenset(n for t in targets for n in assigned_names(t.target) if "." not in n)
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock)):
        return _sequence(statement.body, imports)
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        other = frozenset() if orelse is None else _binds(orelse if isinstance(orelse, cst.If) else orelse.body, imports)
        return _both(_binds(statement.body, imports), other)
    if isinstance(statement, (cst.With, cst.Else)):
        return _binds(statement.body, imports)
    if isinstance(statement, cst.Try):
        # The body may stop at any statement, into a handler: bound after both, or by `finally`.
        arms = [_binds(statement.body, imports) | (_binds(statement.orelse.body, imports) if statement.orelse else frozenset())]
        arms += [_binds(handler.body, imports) for handler in statement.handlers]
        joined = arms[0]
        for arm in arms[1:]:
            joined = _both(joined, arm)
        final = _binds(statement.finalbody.body, imports) if statement.finalbody is not None else frozenset()
        return _either(joined, final)
    return frozenset()  # loops may run zero times; match, nested defs: nothing provable


def _sequence(statements: Sequence[cst.CSTNode], imports: ImportMap) -> frozenset[str]:
    bound: frozenset[str] = frozenset()
    for statement in statements:
        bound = _either(bound, _binds(statement, imports))
        if isinstance(bound, _Everything):
            break
    return bound


def _either(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Bound by one after the other."""
    return _EVERYTHING if isinstance(a, _Everything) or isinstance(b, _Everything) else a | b


def _both(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Bound after either of two arms."""
    if isinstance(a, _Everything):
        return b
    if isinstance(b, _Everything):
        return a
    return a & b


def accelerator_in_scope(model: SemanticModel, node: cst.CSTNode) -> str | None:
    """The accelerator a fix may name at ``node``: bound on every path before it, or None."""
    return accelerator_at(node, model.context)


def accelerator_may_be_none(model: SemanticModel, accelerator: str, node: cst.CSTNode) -> str | None:
    """Why ``accelerator`` (what :func:`accelerator_in_scope` names at ``node``) may be None
    there, or None when it is bound to an accelerator on every path. A fix that names it stands
    on this fact: where it is missing, the fix is unsafe and says why.

    ``self.accelerator`` counts as bound only when no method of the class (``__init__`` or another
    constructor) stores a value that may be None in it: ``self.accelerator = accelerator`` from
    ``accelerator: Accelerator | None = None``, or ``None`` itself. A local or a parameter is
    asked of the path-sensitive nullness analysis at ``node``.
    """
    from trllint.facts.none_syntax import parameter_none_reasons
    from trllint.facts.nullness import may_be_none

    context = model.context
    if accelerator.startswith("self.") and accelerator.count(".") == 1:
        cls = context.enclosing_class(node)
        if cls is not None:
            # What the class's methods store: read once per class and attribute, however many fixes ask.
            return model.once(
                (accelerator_may_be_none, id(cls), accelerator),
                lambda: _optional_store_in(cls, accelerator, parameter_none_reasons),
            )
    scope = context.enclosing_function(node) or model.source.module
    if model.once((accelerator_may_be_none, id(scope), accelerator), lambda: _binds_only_accelerators(model, scope, accelerator)):
        return None  # every binding in the scope is an accelerator: no path can make it None
    if may_be_none(model, accelerator, node):
        return f"{accelerator} may be None here"
    return None


def _binds_only_accelerators(model: SemanticModel, scope: cst.CSTNode, name: str) -> bool:
    """Every binding of ``name`` in ``scope`` is an accelerator (``Accelerator(...)``, or a
    parameter with no None default nor Optional annotation); asked once per scope and name, so
    the path-sensitive question is left for the scopes that may bind None."""
    from trllint.facts.none_syntax import parameter_none_reasons

    if isinstance(scope, cst.FunctionDef):
        for param in (*scope.params.params, *scope.params.kwonly_params, *scope.params.posonly_params):
            if param.name.value == name and parameter_none_reasons(param):
                return False
    imports = model.imports
    only = True

    class Bindings(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal only
            if any(name in assigned_names(t.target) for t in node.targets) and not _is_accelerator_by_name_or_call(node.value, imports):
                only = False

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal only
            if name in assigned_names(node.target) and (node.value is None or not _is_accelerator_by_name_or_call(node.value, imports)):
                only = False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope

    walk.visit(scope, Bindings())
    return only


def _optional_store_in(cls: cst.ClassDef, accelerator: str, none_reasons: Callable[[cst.Param], frozenset[str]]) -> str | None:
    for method in methods_of(cls).values():
        reason = _stores_optional(method, accelerator, none_reasons)
        if reason is not None:
            return f"{accelerator} may be None: {method.name.value}() stores {reason}"
    return None


def _stores_optional(method: cst.FunctionDef, attribute: str, none_reasons: Callable[[cst.Param], frozenset[str]]) -> str | None:
    """What ``method`` stores in ``attribute`` that may be None (None itself, or a parameter that
    defaults to None or is annotated Optional), else None."""
    params = {p.name.value: p for p in (*method.params.params, *method.params.kwonly_params, *method.params.posonly_params)}
    found: str | None = None

    class Stores(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if found is None and any(attribute in assigned_names(t.target) for t in node.targets):
                found = _optional_value(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal found
            if found is None and node.value is not None and attribute in assigned_names(node.target):
                found = _optional_value(node.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is method  # a nested function stores when it runs, not here

    def _optional_value(value: cst.BaseExpression) -> str | None:
        if isinstance(value, cst.Name) and value.value == "None":
            return "None"
        if isinstance(value, cst.Name) and value.value in params:
            reasons = none_reasons(params[value.value])
            if reasons:
                return f"`{value.value}`, which {sorted(reasons)[0].replace(f'parameter `{value.value}` ', '')}"
        return None

    walk.visit(method, Stores())
    return found
