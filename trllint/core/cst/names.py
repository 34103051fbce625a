"""What a piece of syntax names: dotted names, called functions, and the imports behind them.

Rules match calls by the name a reader would use (``accelerator.prepare``,
``torch.nn.DataParallel``); ``ImportMap`` turns local aliases (``from torch.nn.parallel import
DistributedDataParallel as DDP``) back into those names, without LibCST's costly qualified-name
metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


# The expressions with a scope of their own, whose ``for`` targets bind names inside them only.
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def dotted_name(node: cst.BaseExpression | None) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None (calls and subscripts break the chain)."""
    # Leaf classes compared with `is`, not isinstance (trllint.core.cst.walk.node_types says why):
    # asked of nearly every expression of a file.
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def read_through(node: cst.BaseExpression) -> cst.BaseExpression:
    """What ``node`` reads, through the calls that only pass it on: ``bool(x)`` reads ``x``,
    ``getattr(obj, "flag", False)`` reads ``obj.flag``."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        args, called = node.args, node.func.value
        attribute = args[1].value if len(args) in (2, 3) else None
        if called == "bool" and len(args) == 1 and args[0].keyword is None:
            node = args[0].value
        elif (
            called == "getattr"
            and isinstance(attribute, cst.SimpleString)
            and str(attribute.evaluated_value).isidentifier()
        ):
            node = cst.Attribute(value=args[0].value, attr=cst.Name(str(attribute.evaluated_value)))
        else:
            break
    return node


def declared_names(
    function: cst.FunctionDef, kinds: tuple[type[cst.Global] | type[cst.Nonlocal], ...] = (cst.Global, cst.Nonlocal)
) -> set[str]:
    """The names ``global`` (and ``nonlocal``) statements anywhere in ``function`` take from an
    outer scope."""
    names: set[str] = set()

    class Declarations(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kinds):
                names.update(n.name.value for n in node.names)
            return True

    function.visit(Declarations())
    return names


def call_name(call: cst.Call) -> str | None:
    return dotted_name(call.func)


def last_attribute(name: str | None) -> str | None:
    return name.rsplit(".", 1)[-1] if name else None


def argument(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument passed as ``keyword=`` or, failing that, at ``position`` (0-based)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def parameters(params: cst.Parameters, *, stars: bool = False) -> list[cst.Param]:
    """A signature's named parameters in order (positional-only, regular, keyword-only); with
    ``stars``, ``*args`` and ``**kwargs`` too. The one parameter lister every analysis uses."""
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    if stars:
        found += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return found


def parameter_names(params: cst.Parameters, *, stars: bool = False) -> list[str]:
    return [param.name.value for param in parameters(params, stars=stars)]


def assignment_targets(node: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    """What an assignment assigns to: each target of ``a = b = v``, the one of ``a: T = v``."""
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def assigned_names(target: cst.BaseExpression, unnamed: str | None = None) -> list[str]:
    """Dotted names bound by an assignment target (tuple unpacking and ``*rest`` flattened).

    A target with no dotted name (``d[k]``) gives ``unnamed`` when one is asked for.
    """
    kind = type(target)
    if kind is cst.Tuple or kind is cst.List:
        names: list[str] = []
        for element in target.elements:  # type: ignore[attr-defined]  # a Tuple or a List
            names.extend(assigned_names(element.value, unnamed))
        return names
    if kind is cst.StarredElement:
        return assigned_names(target.value, unnamed)  # type: ignore[attr-defined]
    name = dotted_name(target)
    if name:
        return [name]
    return [unnamed] if unnamed is not None else []


Comprehension = cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp


def comprehension_parts(node: Comprehension) -> tuple[cst.BaseExpression, list[cst.BaseExpression], frozenset[str]]:
    """A comprehension's first iterable, read in the enclosing scope; the parts read in its own
    scope (its elements, conditions and inner iterables); and the names its targets bind there,
    which hide the enclosing scope's names of the same spelling."""
    parts: list[cst.BaseExpression] = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
    own: set[str] = set()
    clause: cst.CompFor | None = node.for_in
    while clause is not None:
        own.update(assigned_names(clause.target))
        if clause is not node.for_in:
            parts.append(clause.iter)
        parts.extend(condition.test for condition in clause.ifs)
        clause = clause.inner_for_in
    return node.for_in.iter, parts, frozenset(own)


@dataclass(frozen=True)
class ScopeBinding:
    """One binding of a name in a scope's own body. ``value``: what a plain ``name = value`` (or
    ``name: T = value``) binds; ``loop``: a ``for`` statement binds it; neither: another
    statement does (an unpacking, ``+=``, ``with``/``except ... as``, ``:=``, ``del``, an import,
    a nested ``def``/``class``, ``global``/``nonlocal``), with a value no reader follows."""

    value: cst.BaseExpression | None = None
    loop: bool = False


def scope_bindings(scope: cst.FunctionDef | cst.Module) -> dict[str, list[ScopeBinding]]:
    """Every binding of a plain name in ``scope``'s own body, by name, in source order. Nested
    functions, classes and lambdas are scopes of their own: only their names are bound here (and,
    in a module, the names their ``global`` statements take over). Parameters are not listed."""
    visitor = _ScopeBindings(scope)
    scope.visit(visitor)
    return visitor.bindings


class _ScopeBindings(cst.CSTVisitor):
    # A class of the module: one made per call would leave a reference cycle holding the tree.
    def __init__(self, scope: cst.FunctionDef | cst.Module) -> None:
        super().__init__()
        self.scope = scope
        self.bindings: dict[str, list[ScopeBinding]] = {}

    def bind(self, names: list[str], binding: ScopeBinding = ScopeBinding()) -> None:
        for name in names:
            if name and "." not in name:
                self.bindings.setdefault(name, []).append(binding)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.scope:
            return True
        self.bind([node.name.value])
        if isinstance(self.scope, cst.Module):
            self.bind(sorted(declared_names(node, (cst.Global,))))
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bind([node.name.value])
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bind([target.target.value], ScopeBinding(value=node.value))
            else:
                self.bind(assigned_names(target.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is None:
            return  # an annotation alone binds nothing
        if isinstance(node.target, cst.Name):
            self.bind([node.target.value], ScopeBinding(value=node.value))
        else:
            self.bind(assigned_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.bind(assigned_names(node.target), ScopeBinding(loop=True))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bind(assigned_names(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(assigned_names(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self.bind(assigned_names(node.target))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(assigned_names(node.asname.name))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind(assigned_names(node.name.name))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname is not None else node.name
        self.bind([(dotted_name(bound) or "").split(".")[0]])

    def visit_Global(self, node: cst.Global) -> None:
        self.bind([n.name.value for n in node.names])

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.bind([n.name.value for n in node.names])


@dataclass
class ImportMap:
    """Local name -> full dotted name, from a module's import statements."""

    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, module: cst.Module) -> ImportMap:
        imports = cls()
        for statement in module.body:
            imports._collect(statement)
        return imports

    def _collect(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.add(small)
        elif isinstance(statement, (cst.If, cst.Try)):
            # `try: import deepspeed` / `if is_deepspeed_available(): import deepspeed`
            for block in statement_blocks(statement):
                for inner in block.body:
                    self._collect(inner)

    def add(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None:
                    self.aliases[dotted_name(alias.asname.name) or full] = full
                else:
                    head = full.split(".", 1)[0]
                    self.aliases.setdefault(head, head)
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            if node.relative:
                return
            base = dotted_name(node.module) if node.module else None
            if base is None:
                return
            for alias in node.names:
                name = dotted_name(alias.name)
                if name is None:
                    continue
                local = dotted_name(alias.asname.name) if alias.asname is not None else name
                if local:
                    self.aliases[local] = f"{base}.{name}"

    def resolve(self, name: str | None) -> str | None:
        """The full name behind a local dotted name (``DDP`` -> ``torch.nn.parallel.DistributedDataParallel``)."""
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def imports_any(self, *prefixes: str) -> bool:
        return any(
            full == prefix or full.startswith(prefix + ".") for full in self.aliases.values() for prefix in prefixes
        )


def statement_blocks(statement: cst.If | cst.Try) -> list[cst.BaseSuite]:
    """The blocks of an ``if`` (every ``elif`` and the ``else``) or a ``try`` (handlers, ``else``)."""
    blocks: list[cst.BaseSuite] = [statement.body]
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        while isinstance(orelse, cst.If):  # `elif`: its body, then what follows it
            blocks.append(orelse.body)
            orelse = orelse.orelse
        if orelse is not None:
            blocks.append(orelse.body)
    else:
        blocks.extend(handler.body for handler in statement.handlers)
        if statement.orelse is not None:
            blocks.append(statement.orelse.body)
    return [b for b in blocks if isinstance(b, cst.IndentedBlock)]


def matches(full_name: str | None, *candidates: str) -> bool:
    """True when ``full_name`` is one of ``candidates`` or ends with ``.candidate``."""
    if full_name is None:
        return False
    return any(full_name == c or full_name.endswith("." + c) for c in candidates)
