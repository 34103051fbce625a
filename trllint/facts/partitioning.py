"""Which backends may shard the parameters of one module: the module a name holds, followed from
where it is built to everything the file hands it to.

A module's parameters are sharded only by what wraps it (DeepSpeed's engine, built by
``accelerator.prepare`` or ``deepspeed.initialize``; FSDP, built by ``prepare``, ``prepare_model``
or a wrap) or by a construction under ``deepspeed.zero.Init`` (transformers' ``from_pretrained``
and ``from_config`` enter it when accelerate's ``zero3_init_flag`` is on). So a module is known
unsharded under a backend when

- every assignment of its name builds it with diffusers (``UNet2DConditionModel.from_config(...)``:
  diffusers' ``ModelMixin`` never enters ``zero.Init``; a transformers class may), or rebinds the
  same module (``accelerator.unwrap_model(m)``, ``m.to(device)``), or wraps it with
  ``accelerator.prepare_model(m)``, which builds an FSDP wrapper but never a DeepSpeed engine
  (accelerate builds the engine in ``prepare`` only);
- and the file hands it to nothing that could wrap it: only to accelerate's helpers that read
  it (``unwrap_model``, ``accumulate``), to diffusers (a pipeline), to a few builtins, to its own
  methods (``m.parameters()``, a forward), or to a function of the file that does the same with it.

Anything else (a name bound by unpacking, a parameter, an alias, a call of anything unknown, a
file that enters ``zero.Init`` itself) is unknown: every sharding backend stays possible.
TRL008 asks whether ZeRO-3 partitions the model whose checkpoint it checks; TRL007 whether any
backend shards the model whose forward only some ranks run.
"""

from __future__ import annotations

import libcst as cst

from trllint.core.cst.names import argument, call_name, declared_names, dotted_name, parameters, scope_bindings
from trllint.facts.accelerators import is_accelerator
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import SHARDED, Backend
from trllint.facts.rank_lattice import MODULE_RETURNS_ITSELF
from trllint.semantic.model import SemanticModel, imports_of

NEVER: frozenset[Backend] = frozenset()
FSDP_ONLY = frozenset({Backend.FSDP})

# Libraries none of whose calls wraps a module it is handed or builds one under zero.Init.
_NEVER_SHARDING_LIBRARIES = ("diffusers",)
# Module methods that return the module itself (MODULE_RETURNS_ITSELF) or parts of it (submodules,
# these): followed like the name.
_RETURNS_PARTS = frozenset({"get_submodule", "children", "modules", "named_children", "named_modules"})
# Accelerator methods that read the module they are handed and wrap nothing.
_ACCELERATOR_READERS = frozenset(
    {"unwrap_model", "accumulate", "no_sync", "get_state_dict", "save_model", "register_for_checkpointing"}
)
_BUILTIN_READERS = frozenset({"isinstance", "hasattr", "type", "id", "print", "repr", "str", "len", "callable"})
_MAX_DEPTH = 4  # functions of the file followed into, one inside the other


def backends_sharding(model: SemanticModel, module: cst.BaseExpression, at: cst.CSTNode) -> frozenset[Backend]:
    """The backends under which the parameters of the module ``module`` names where ``at`` reads
    it may be sharded: ``SHARDED`` when unknown, fewer where the file shows which wrap it."""
    if not isinstance(module, cst.Name):
        return SHARDED
    scope = _binding_scope(model, module.value, at)
    if scope is None:
        return SHARDED
    return model.once(
        (backends_sharding, id(scope), module.value), lambda: _Follow(model).name_in(scope, module.value)
    )


Scope = cst.FunctionDef | cst.Module


def _binding_scope(model: SemanticModel, name: str, at: cst.CSTNode) -> Scope | None:
    """The function (or the module) whose variable ``name`` is where ``at`` reads it; None where a
    ``global`` or ``nonlocal`` makes that unclear."""
    for ancestor in model.context.ancestors(at):
        if isinstance(ancestor, cst.FunctionDef):
            if name in declared_names(ancestor):
                return None
            if _binds(ancestor, name):
                return ancestor
        elif isinstance(ancestor, cst.Module):
            return ancestor
    return None


class _Follow:
    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self.imports = imports_of(model.source)
        self.functions = {
            s.name.value: s for s in model.source.module.body if isinstance(s, cst.FunctionDef)
        }
        self.seen: set[tuple[int, str]] = set()

    def name_in(self, scope: Scope, name: str) -> frozenset[Backend]:
        if self.model.once((_enters_zero_init,), lambda: _enters_zero_init(self.model)):
            return SHARDED
        if isinstance(scope, cst.FunctionDef) and name in {p.name.value for p in parameters(scope.params, stars=True)}:
            return SHARDED  # handed in by a caller
        values = _assigned_values(scope, name)
        if values is None or not values:
            return SHARDED
        backends: set[Backend] = set()
        built = False
        for value in values:
            kind = self._binding(value, name)
            if kind is None:
                return SHARDED
            built = built or kind == "built"
            if kind == "prepare_model":
                backends |= FSDP_ONLY
        if not built:
            return SHARDED  # every binding rebinds it: where it comes from is not shown
        return frozenset(backends) | self._uses(scope, name, 0)

    def _binding(self, value: cst.BaseExpression, name: str) -> str | None:
        """What an assignment of the name does: ``built`` (a construction that shards nothing),
        ``same`` (the module it held), ``prepare_model``; None for anything else."""
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        if self._never_shards(func):
            return "built"
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if isinstance(receiver, cst.Name) and receiver.value == name and func.attr.value in MODULE_RETURNS_ITSELF:
                return "same"
            handed = value.args[0].value if value.args else None
            if isinstance(handed, cst.Name) and handed.value == name and is_accelerator(receiver, self.model.context):
                if func.attr.value == "unwrap_model":
                    return "same"
                if func.attr.value == "prepare_model":
                    return "prepare_model"
        return None

    def _never_shards(self, func: cst.BaseExpression) -> bool:
        full = self.imports.resolve(dotted_name(func))
        return full is not None and full.split(".", 1)[0] in _NEVER_SHARDING_LIBRARIES and "." in full

    # ---- where the module goes ----------------------------------------------------------------

    def _uses(self, scope: Scope, name: str, depth: int) -> frozenset[Backend]:
        backends: set[Backend] = set()
        for use in _reads(scope, name):
            backends |= self._use(use, name, depth)
            if backends >= SHARDED:
                break
        return frozenset(backends)

    def _use(self, node: cst.BaseExpression, name: str, depth: int) -> frozenset[Backend]:
        """The backends that may shard the module through this read of it."""
        context = self.model.context
        expression: cst.CSTNode = node
        while True:
            parent = context.parent(expression)
            if isinstance(parent, cst.Attribute) and parent.value is expression:
                grand = context.parent(parent)
                if isinstance(grand, cst.Call) and grand.func is parent:
                    if parent.attr.value not in MODULE_RETURNS_ITSELF | _RETURNS_PARTS:
                        return NEVER  # a method: its result (parameters(), a save) is no module
                    expression = grand
                    continue
                expression = parent  # a part of the module (m.config, m.encoder): followed
                continue
            if isinstance(parent, cst.Subscript) and parent.value is expression:
                expression = parent
                continue
            if isinstance(parent, cst.Call) and parent.func is expression:
                return NEVER  # a forward
            if isinstance(parent, cst.Arg):
                call = context.parent(parent)
                if not isinstance(call, cst.Call):
                    return SHARDED  # a class's base
                if self._unwraps(call, parent) or (_called(call, "getattr") and call.args[0] is parent):
                    expression = call  # `accelerator.unwrap_model(m)` is the module, `getattr(m, a)` a part
                    continue
                return self._handed(call, parent, depth)
            if isinstance(parent, cst.Assign) and parent.value is expression:
                return self._assigned(parent, name, depth)
            if isinstance(parent, (cst.Expr, cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
                return NEVER
            return SHARDED

    def _unwraps(self, call: cst.Call, arg: cst.Arg) -> bool:
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value == "unwrap_model"
            and call.args[0] is arg
            and is_accelerator(func.value, self.model.context)
        )

    def _assigned(self, assign: cst.Assign, name: str, depth: int) -> frozenset[Backend]:
        """``name = m.to(device)`` rebinds the module's own name (whose assignments were read);
        ``alias = accelerator.unwrap_model(m)`` gives it another, whose reads are followed too."""
        if not all(isinstance(t.target, cst.Name) for t in assign.targets):
            return SHARDED  # into a container, an attribute, an unpacking
        aliases = {t.target.value for t in assign.targets if isinstance(t.target, cst.Name)} - {name}
        if not aliases:
            return NEVER
        if depth >= _MAX_DEPTH:
            return SHARDED
        scope: Scope = self.model.context.enclosing_function(assign) or self.model.source.module
        backends: set[Backend] = set()
        for alias in aliases:
            key = (id(scope), alias)
            if key not in self.seen:
                self.seen.add(key)
                backends |= self._uses(scope, alias, depth + 1)
        return frozenset(backends)

    def _handed(self, call: cst.Call, arg: cst.Arg, depth: int) -> frozenset[Backend]:
        if arg.star:
            return SHARDED
        func = call.func
        if isinstance(func, cst.Attribute) and is_accelerator(func.value, self.model.context):
            if func.attr.value in _ACCELERATOR_READERS:
                return NEVER
            return FSDP_ONLY if func.attr.value == "prepare_model" else SHARDED
        if self._never_shards(func):
            return NEVER
        if isinstance(func, cst.Name):
            if func.value in _BUILTIN_READERS and func.value not in self.functions:
                return NEVER
            function = self.functions.get(func.value)
            if function is not None:
                return self._into(function, call, arg, depth)
        return SHARDED

    def _into(self, function: cst.FunctionDef, call: cst.Call, arg: cst.Arg, depth: int) -> frozenset[Backend]:
        """A function of the file handed the module: what it does with its parameter."""
        if depth >= _MAX_DEPTH:
            return SHARDED
        params = parameters(function.params)
        if arg.keyword is not None:
            param = next((p for p in params if p.name.value == arg.keyword.value), None)
        else:
            index = next(i for i, a in enumerate(a for a in call.args if a.keyword is None) if a is arg)
            positional = [*function.params.posonly_params, *function.params.params]
            param = positional[index] if index < len(positional) else None
        if param is None:
            return SHARDED
        key = (id(function), param.name.value)
        if key in self.seen:
            return NEVER  # followed already (a recursion): its other reads answer
        self.seen.add(key)
        if param.name.value in declared_names(function):
            return SHARDED
        return self._uses(function, param.name.value, depth + 1)


def _called(call: cst.Call, name: str) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == name


def _enters_zero_init(model: SemanticModel) -> bool:
    """The file builds under ``zero.Init`` itself (``deepspeed.zero.Init(...)``, a plugin's
    ``zero3_init_context_manager(enable=...)`` not ``False``): any construction may be under it."""
    for call in calls_in(model):
        name = call_name(call) or ""
        if name == "Init" or name.endswith("zero.Init"):
            return True
        if name.endswith("zero3_init_context_manager"):
            enable = argument(call, "enable", 0)  # accelerate's default: False
            if enable is not None and not (isinstance(enable.value, cst.Name) and enable.value.value == "False"):
                return True
    return False


# ---- the names a scope binds and reads --------------------------------------------------------


def _binds(function: cst.FunctionDef, name: str) -> bool:
    if name in {p.name.value for p in parameters(function.params, stars=True)}:
        return True
    values = _assigned_values(function, name)
    return values is None or bool(values)


def _assigned_values(scope: Scope, name: str) -> list[cst.BaseExpression] | None:
    """The values the scope's plain assignments of ``name`` (``name = value``) bind, outside its
    nested functions and classes; None when another statement binds it (an unpacking, a loop, a
    ``with ... as``, an augmented assignment, an import, a ``global`` in the module)."""
    values: list[cst.BaseExpression] = []
    for binding in scope_bindings(scope).get(name, ()):
        if binding.value is None:
            return None
        values.append(binding.value)
    return values


def _reads(scope: Scope, name: str) -> list[cst.Name]:
    """Every read of the scope's variable ``name``: in its body and in the functions nested in it
    that do not bind a variable of that name themselves (closures)."""
    reads: list[cst.Name] = []

    class Reads(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope or not _binds(node, name)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return name not in {p.name.value for p in parameters(node.params, stars=True)}

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return True

        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return not isinstance(node.target, cst.Name)  # `name = ...`: a store

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `x.name` is no read of the variable `name`
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # `f(name=...)`: the keyword is no read
            return False

        def visit_Param(self, node: cst.Param) -> bool:
            if node.default is not None:
                node.default.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                reads.append(node)

    scope.visit(Reads())
    return reads
