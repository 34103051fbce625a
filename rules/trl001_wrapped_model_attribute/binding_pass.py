"""The one pass over a file that finds which models may be wrapped at each read of a member.

It follows bindings in source order within a function (``model = accelerator.unwrap_model(model)``
ends the wrapping; branches are not told apart, but after an unwrap under a rank test the other
ranks still hold the wrapper), through other names for a model, lists of
models and loops over them, hands a wrapped model on to the parameters of the same file's
functions and methods it is passed to, and starts each method of a class with the wrapped
``self`` attributes its methods and its bases bind (``wrapped_models`` says where;
``inherited_wrappings`` what the bases bind).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from trllint.core.cst.names import ImportMap, argument, assigned_names, call_name, dotted_name, matches, parameter_names
from trllint.facts.ranks import RankFacts
from trllint.facts.wrapping import (
    ACCELERATE,
    DATA_PARALLEL,
    HF_MODEL_MEMBERS,
    STEP_ARGUMENT,
    TRAINER_WRAPPED_ATTRIBUTES,
    Wrapping,
    returns_a_wrapper,
    step_model_parameter,
    wrapping_made_by,
)
from trllint.rules.trl001_wrapped_model_attribute.binding_records import IfBindings, Scope, WrappingFacts, loop_element, tuple_of
from trllint.rules.trl001_wrapped_model_attribute.inherited_wrappings import ClassNames, InheritedWrappings
from trllint.rules.trl001_wrapped_model_attribute.returned_wrappers import arguments_given, returned_parameter, returned_wrapping
from trllint.rules.trl001_wrapped_model_attribute.wrapper_members import member_read_by
from trllint.semantic.context import is_trainer_class, methods_of

if TYPE_CHECKING:
    from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import ProjectBases


class BindingPass(cst.CSTVisitor):
    def __init__(
        self,
        facts: WrappingFacts,
        imports: ImportMap,
        step_methods: tuple[str, ...],
        functions: dict[str, cst.FunctionDef],
        plain: dict[str, frozenset[str]],
        classes: dict[str, cst.ClassDef],
        bases: ProjectBases,
        class_names: ClassNames,
        ranks: RankFacts,
    ) -> None:
        super().__init__()
        self.ranks = ranks
        self.bases = InheritedWrappings(imports, classes, bases, class_names, facts.self_attributes, facts.inherited)
        self.project = bases.project
        self.plain_classes: dict[str, frozenset[str]] = plain
        self.facts = facts
        self.imports = imports
        self.step_methods = step_methods
        self.functions = functions
        self.scopes: list[Scope] = [Scope(None, None)]
        self.classes: list[cst.ClassDef | None] = []
        self.visited: set[int] = set()  # functions walked so far
        self.stale: set[int] = set()  # functions walked before they received a new wrapping
        # id(class) -> its methods by name, and the ids of every function in its body: read
        # once per class, not at each call or method (quadratic in the size of a class).
        self._methods: dict[int, dict[str, cst.FunctionDef]] = {}
        self._members: dict[int, set[int]] = {}
        self._returned: dict[int, Wrapping | None] = {}  # id(function of this file) -> what it returns
        self._handed: dict[int, str | None] = {}  # id(function of this file) -> the parameter it returns

    # ---- scopes -------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.scopes[-1].function is not None:
            self.scopes[-1].functions[node.name.value] = node
        cls = self.classes[-1] if self.classes and self._is_method_of(node, self.classes[-1]) else None
        scope = Scope(node, cls)
        if cls is not None and node.name.value != "__init__":
            scope.bindings.update(self.bases.kept_at(cls, node.name.value))
            scope.bindings.update(self.bases.from_subclasses(cls, node.name.value))
            scope.bindings.update(self.bases.from_library(cls))
            scope.bindings.update(self.bases.of(cls))
            scope.bindings.update(self.facts.self_attributes.get(id(cls), {}))
        library = self.bases.library_base(cls) if cls is not None else None
        if library is not None and node.name.value in library.model_methods:
            parameter = step_model_parameter(node)
            if parameter is not None:
                origin = f"the model argument of {node.name.value}, which {library.name} hands its prepared model"
                wrapping = replace(next(iter(library.attributes.values())), origin=origin)
                scope.bindings[parameter] = wrapping
                self.facts.parameters.setdefault((id(node), parameter), wrapping)
        for name in parameter_names(node.params):
            # A parameter is the function's own name: it hides an enclosing function's binding.
            received = self.facts.parameters.get((id(node), name))
            scope.bindings[name] = received if received is not None else scope.bindings.get(name)
        if cls is not None and is_trainer_class(cls):
            for attribute in TRAINER_WRAPPED_ATTRIBUTES:
                scope.bindings.setdefault(attribute, Wrapping(STEP_ARGUMENT, f"Trainer's {attribute}"))
            if node.name.value in self.step_methods:
                parameter = step_model_parameter(node)
                if parameter is not None:
                    wrapping = Wrapping(STEP_ARGUMENT, f"the model argument of {node.name.value}")
                    scope.bindings[parameter] = wrapping
                    self.facts.parameters.setdefault((id(node), parameter), wrapping)
        self.visited.add(id(node))
        self.scopes.append(scope)
        self.classes.append(None)  # a class nested in a function is not this method's class

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.classes.pop()

    # ---- bindings -----------------------------------------------------------------------

    def _lookup(self, name: str) -> Wrapping | None:
        for scope in reversed(self.scopes):
            if name in scope.bindings:
                return scope.bindings[name]
        return None

    def _accelerators(self) -> set[str]:
        return set().union(*(scope.accelerators for scope in self.scopes))

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        scope = self.scopes[-1]
        # Only a call (or its first item) wraps: the accelerators in scope are gathered for those.
        made = None
        if isinstance(value, (cst.Call, cst.Subscript)):
            made = wrapping_made_by(value, self.imports, self._accelerators())
        if made is None and isinstance(value, cst.Call):
            local = self._local_wrapper(value)  # a function of this file wraps
            made = None if local is None else [local]
        if made is None and isinstance(value, cst.Call):
            passed = self._handed_back(value)  # a function of this file returns the model it was given
            made = None if passed is None else [passed]
        if made is None and isinstance(value, cst.Call) and self.project is not None:
            returned = returned_wrapping(self.project, value)  # a helper of the project wraps
            made = None if returned is None else [returned]
        if made is None and isinstance(value, cst.Subscript):
            element = self._tuple_element(value)
            made = None if element is None else [element]
        if made is None and isinstance(value, (cst.Name, cst.Attribute)) and isinstance(target, cst.Name) and not scope.branch_depth:
            # Another local name for the same object, outside a branch (`else: bare = model`
            # after `if hasattr(model, "module"):` handles the bare model). Not a `self`
            # attribute: that would hold the wrapper in every method, wherever the alias was made.
            alias = self._lookup(dotted_name(value) or "")
            made = None if alias is None else [alias]
        listed = self._listed_models(value)  # a list or tuple of models, some wrapped
        for name in assigned_names(target):
            scope.tuples.pop(name, None)
        if listed is not None and isinstance(target, (cst.Tuple, cst.List)):
            made = listed if len(listed) == len(target.elements) else None  # `unet, te = te, unet`
        elif listed is not None:
            made = None  # a name that holds a list holds no model itself
            if (name := dotted_name(target)) is not None:
                scope.tuples[name] = listed
        elements = tuple_of(value, made)
        if isinstance(target, cst.Name) and elements is not None:
            scope.tuples[target.value] = elements
            made = None  # the name holds the tuple, not a model
        if isinstance(value, cst.Call) and matches(self.imports.resolve(call_name(value)), "accelerate.Accelerator", "Accelerator"):
            scope.accelerators.update(n for n in assigned_names(target) if "." not in n or n.startswith("self."))
        lacking = self._plain_instances(target, value, made)
        if isinstance(target, (cst.Tuple, cst.List)) and made is not None and len(made) > 1:
            for index, part in enumerate(e.value for e in target.elements):
                wrapping = made[index] if index < len(made) else None
                for name in assigned_names(part):
                    self._set(scope, name, wrapping, lacking.get(name))
            return
        for index, name in enumerate(assigned_names(target)):
            wrapping = None
            if made is not None:
                # `model, opt = accelerator.prepare(model, opt)`: every element comes back prepared.
                # `x = deepspeed.initialize(...)` binds the whole tuple, not the engine.
                wrapping = made[0] if len(made) == 1 else None
            self._set(scope, name, wrapping, lacking.get(name))

    def _tuple_element(self, value: cst.Subscript) -> Wrapping | None:
        """What ``results[0]`` holds, when ``results`` is bound to the tuple a call of several
        wraps returned, or to a list of models."""
        index = value.slice[0].slice if len(value.slice) == 1 else None
        held = self._tuple_named(dotted_name(value.value))
        if held is None or not isinstance(index, cst.Index) or not isinstance(index.value, cst.Integer):
            return None
        position = int(index.value.value)
        return held[position] if position < len(held) else None

    def _tuple_named(self, name: str | None) -> list[Wrapping | None] | None:
        """What each element of the tuple or list ``name`` holds, when some is a wrapped model."""
        for scope in reversed(self.scopes):
            if name in scope.tuples:
                return scope.tuples[name]
            if name in scope.bindings:
                return None  # this scope's own name, bound to something else
        return None

    def _listed_models(self, value: cst.BaseExpression | None) -> list[Wrapping | None] | None:
        """``[encoder1, encoder2]`` or another name for such a list: what each element holds,
        when some is wrapped."""
        if isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            held = [self._lookup(dotted_name(e.value) or "") for e in value.elements]
            return held if any(held) else None
        return self._tuple_named(dotted_name(value)) if isinstance(value, (cst.Name, cst.Attribute)) else None

    def _bind_loop(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        """``for encoder in encoders``, ``enumerate(encoders)``, ``zip(names, encoders)``: a loop
        variable holds what some element of its list holds."""
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = [(target, iterable)]
        spread = call_name(iterable) if isinstance(iterable, cst.Call) else None
        if isinstance(iterable, cst.Call) and spread in ("zip", "enumerate") and isinstance(target, (cst.Tuple, cst.List)):
            sources: list[cst.BaseExpression | None] = [a.value for a in iterable.args if a.keyword is None]
            if spread == "enumerate":
                sources = [None, *sources[:1]]
            parts = [e.value for e in target.elements]
            pairs = list(zip(parts, sources)) if len(parts) == len(sources) else [(target, None)]
        scope = self.scopes[-1]
        for part, source in pairs:
            wrapping = loop_element(self._listed_models(source)) if isinstance(part, cst.Name) else None
            for name in assigned_names(part):
                scope.tuples.pop(name, None)
                self._set(scope, name, wrapping)

    def _plain_instances(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, made: list[Wrapping | None] | None
    ) -> dict[str, str]:
        """For each name ``target`` binds to an instance of a plain class (``PolicyAndValueWrapper(...)``
        or ``accelerator.prepare(<such a name>, ...)``): that class's name."""
        if not isinstance(value, cst.Call):
            return {}
        scope = self.scopes[-1]
        callee = call_name(value)
        if callee is not None and callee in self.plain_classes:
            return {name: callee for name in assigned_names(target)}
        if made is None:
            return {}
        arguments = [dotted_name(a.value) for a in value.args if a.keyword is None and not a.star]
        elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        instances: dict[str, str] = {}
        for element, argument in zip(elements, arguments):
            if argument in scope.plain:
                instances.update((name, scope.plain[argument]) for name in assigned_names(element))
        return instances

    def _set(self, scope: Scope, name: str, wrapping: Wrapping | None, instance_of: str | None = None) -> None:
        if instance_of is None:
            scope.plain.pop(name, None)
        else:
            scope.plain[name] = instance_of
            if wrapping is not None:
                lacking = self.plain_classes[instance_of]
                wrapping = replace(wrapping, missing_unwrapped=lacking, instance_of=instance_of)
        if wrapping is not None and scope.branch_depth:
            wrapping = replace(wrapping, conditional=True)
        if wrapping is None and scope.ifs and name in scope.ifs[-1].before:
            scope.ifs[-1].rebound.setdefault(name, scope.ifs[-1].before[name])
        scope.bindings[name] = wrapping
        if wrapping is not None and name.startswith("self.") and name.count(".") == 1 and scope.cls is not None:
            attributes = self.facts.self_attributes.setdefault(id(scope.cls), {})
            if name not in attributes:
                attributes[name] = wrapping
                # Methods walked before this one read self.<name> without knowing it is wrapped.
                methods = self._methods_of(scope.cls).values()
                self.stale.update(id(m) for m in methods if m is not scope.function and id(m) in self.visited)

    def visit_If(self, node: cst.If) -> None:
        scope = self.scopes[-1]
        scope.branch_depth += 1
        scope.ifs.append(IfBindings({name: w for name, w in scope.bindings.items() if w is not None}))

    def leave_If(self, original_node: cst.If) -> None:
        scope = self.scopes[-1]
        scope.branch_depth -= 1
        frame = scope.ifs.pop()
        if original_node.orelse is None and self.ranks.splits_ranks(original_node.test):
            # `if is_main_process: model = accelerator.unwrap_model(model)`: the other ranks
            # skip the block and still hold the wrapper after it.
            test = " ".join(cst.Module([]).code_for_node(original_node.test).split())
            for name, held in frame.rebound.items():
                if scope.bindings.get(name) is None:
                    origin = f"{held.origin}, which the ranks that skip `if {test}:` still hold"
                    scope.bindings[name] = replace(held, origin=origin, conditional=True)
        elif scope.ifs:
            outer = scope.ifs[-1]
            for name, held in frame.rebound.items():
                if name in outer.before:
                    outer.rebound.setdefault(name, held)

    def visit_While(self, node: cst.While) -> None:
        self.scopes[-1].branch_depth += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.scopes[-1].branch_depth -= 1

    def visit_Try(self, node: cst.Try) -> None:
        self.scopes[-1].branch_depth += 1

    def leave_Try(self, original_node: cst.Try) -> None:
        self.scopes[-1].branch_depth -= 1

    def leave_For(self, original_node: cst.For) -> None:
        self.scopes[-1].branch_depth -= 1

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            self._bind(target.target, original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None:
            self._bind(original_node.target, original_node.value)

    def leave_WithItem(self, original_node: cst.WithItem) -> None:
        if original_node.asname is not None:
            self._bind(original_node.asname.name, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind_loop(node.target, node.iter)
        self.scopes[-1].branch_depth += 1

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind(original_node.target, original_node.value)

    # ---- reads and calls ----------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        receiver = dotted_name(node.value)
        if receiver is None or (receiver.count(".") > 1) or ("." in receiver and not receiver.startswith("self.")):
            return
        wrapping = self._lookup(receiver)
        if wrapping is None:
            return
        if node.attr.value in HF_MODEL_MEMBERS:
            self.facts.reads[id(node)] = (node, wrapping)
        elif wrapping.kind in (DATA_PARALLEL, ACCELERATE):
            self.facts.other_reads[id(node)] = (node, wrapping)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self.scopes[-1]
        if scope.cls is not None and scope.function is not None and scope.function.name.value == "__init__":
            if is_super_init(node) or self.bases.calls_library_init(node, scope.cls):
                # From here on, ``self`` holds what the bases' ``__init__`` bound.
                scope.bindings.update(self.bases.from_library(scope.cls))
                scope.bindings.update(self.bases.of(scope.cls))
        self._handed_to_a_library(node)
        callee, skip_self = self._callee(node)
        if callee is None:
            self._handed_to_a_method(node)
            return
        for parameter, value in arguments_given(node, callee, skip_self).items():
            name = dotted_name(value)
            wrapping = self._lookup(name) if name else None
            key = (id(callee), parameter)
            if wrapping is not None and key not in self.facts.parameters:
                self.facts.parameters[key] = wrapping
                if id(callee) in self.visited:
                    # A nested function is walked again with the function that holds it (its closure).
                    nested = self._nested_function(call_name(node))
                    self.stale.add(id(self.scopes[1].function) if nested else id(callee))

    def _handed_to_a_library(self, call: cst.Call) -> None:
        """A wrapped model handed to a library function that reads a member of it."""
        member = member_read_by(self.imports.resolve(call_name(call)))
        handed = argument(call, "model", 0) if member is not None else None
        name = dotted_name(handed.value) if handed is not None else None
        if member is None or handed is None or name is None:
            return
        wrapping = self._lookup(name)
        if wrapping is not None and wrapping.kind in (DATA_PARALLEL, ACCELERATE):
            self.facts.handed_reads[id(call)] = (call, handed.value, member, wrapping)

    def _handed_to_a_method(self, call: cst.Call) -> None:
        """A possibly wrapped model handed to a method this file does not define
        (``self.model.set_prepared_model(results[0])``), by position or keyword."""
        if not isinstance(call.func, cst.Attribute):
            return
        position = 0
        for arg in call.args:
            if arg.star:
                return  # the positions after it are unknown
            wrapping = self._held(arg.value)
            if wrapping is not None:
                at: int | str = arg.keyword.value if arg.keyword is not None else position
                self.facts.handed_to_methods.setdefault(call.func.attr.value, []).append((at, wrapping))
            position += arg.keyword is None

    def _held(self, value: cst.BaseExpression) -> Wrapping | None:
        """What ``value`` holds: a name bound to a wrapped model, an element of a tuple of them
        (``results[0]``), or the wrapper a call makes there."""
        name = dotted_name(value)
        if name is not None:
            return self._lookup(name)
        if isinstance(value, cst.Subscript):
            element = self._tuple_element(value)
            if element is not None:
                return element
        if isinstance(value, (cst.Call, cst.Subscript)):
            made = wrapping_made_by(value, self.imports, self._accelerators())
            if made is None or len(made) != 1 or tuple_of(value, made) is not None:
                return None  # nothing wrapped, or a tuple of things (`accelerator.prepare(model, opt)`)
            return made[0]
        return None

    def _callee(self, call: cst.Call) -> tuple[cst.FunctionDef | None, bool]:
        name = call_name(call)
        if name is None:
            return None, False
        scope = self.scopes[-1]
        if name.startswith("self.") and name.count(".") == 1 and scope.cls is not None:
            return self._methods_of(scope.cls).get(name[5:]), True
        if "." not in name:
            return self._nested_function(name) or self.functions.get(name), False
        return None, False

    def _handed_back(self, call: cst.Call) -> Wrapping | None:
        """The wrapping of the argument a function of this file returns as it received it
        (``model = data_dependent_init(loader, model)``), or None."""
        callee, skip_self = self._callee(call)
        if callee is None:
            return None
        if id(callee) not in self._handed:
            self._handed[id(callee)] = returned_parameter(callee)
        parameter = self._handed[id(callee)]
        given = arguments_given(call, callee, skip_self).get(parameter) if parameter is not None else None
        name = dotted_name(given) if given is not None else None
        return self._lookup(name) if name else None

    def _nested_function(self, name: str | None) -> cst.FunctionDef | None:
        """The function of this name that an enclosing function's body defines, if any."""
        for scope in reversed(self.scopes):
            if name in scope.functions:
                return scope.functions[name]
        return None

    def _local_wrapper(self, call: cst.Call) -> Wrapping | None:
        """The wrapping a call of a module-level function of this file returns
        (``model = wrap_model(model)`` with ``return DistributedDataParallel(model, ...)``)."""
        name = call_name(call)
        function = self.functions.get(name) if name is not None else None
        if function is None:
            return None
        if id(function) not in self._returned:
            found = returns_a_wrapper(function, self.imports)
            if found is not None:
                found = replace(found, origin=f"{found.origin} in {name}()", local_helper=True)
            self._returned[id(function)] = found
        return self._returned[id(function)]

    def _methods_of(self, cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
        methods = self._methods.get(id(cls))
        if methods is None:
            methods = self._methods[id(cls)] = methods_of(cls)
        return methods

    def _is_method_of(self, function: cst.FunctionDef, cls: cst.ClassDef | None) -> bool:
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return False
        members = self._members.get(id(cls))
        if members is None:
            members = self._members[id(cls)] = {id(s) for s in cls.body.body}
        return id(function) in members


def is_super_init(call: cst.Call) -> bool:
    """``super().__init__(...)`` (or ``super(Cls, self).__init__(...)``)."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and dotted_name(func.value.func) == "super"
    )
