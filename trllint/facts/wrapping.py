"""Is this model possibly wrapped by DataParallel, DDP, FSDP or a DeepSpeed engine?

A wrapper is an ``nn.Module`` that holds the real model as ``.module``. It forwards calls and
``nn.Module`` members, but not what a Hugging Face model adds on top (``config``, ``generate``,
``save_pretrained``, ...): DataParallel and DistributedDataParallel raise ``AttributeError``;
a DeepSpeed engine forwards unknown attributes yet has a ``config`` of its own, so
``engine.config`` silently returns DeepSpeed's configuration; FSDP (v1) forwards attribute reads
but its parameters are sharded, so ``generate`` and friends do not work through it.

A model is possibly wrapped when it is
- the model argument of a training-step method of a Trainer subclass (``training_step``,
  ``compute_loss``, ``prediction_step``, plus configured names), or Trainer's own
  ``self.model_wrapped`` / ``self.deepspeed``;
- a parameter of a method of the same class, or of a module-level function, that some call passes
  a possibly wrapped model to (followed transitively: TRL's Online DPO read ``model.config`` in
  ``_generate(model, ...)``, called from ``training_step``);
- a name (or ``self.<name>``) bound from ``accelerator.prepare(...)`` (tuple unpacking too),
  ``accelerator.prepare_model(...)``, ``DataParallel(...)``, ``DistributedDataParallel(...)``,
  ``FullyShardedDataParallel(...)``, ``deepspeed.initialize(...)[0]`` or its first unpacked element,
  or TRL's ``prepare_deepspeed(...)`` (an engine: only its own ``config`` shadows the model's).

``accelerator.prepare_model(m, evaluation_mode=True)`` wraps nothing (accelerate skips DDP and FSDP
for evaluation), so the name it binds is the model itself.

Bindings are followed in source order within a function (``model = accelerator.unwrap_model(model)``
ends the wrapping); branches are not told apart. The facts are computed once per file, in a few
plain traversals (no scope or qualified-name metadata).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

import libcst as cst

from trllint.core.cst import walk
from trllint.semantic.context import DEFAULT_STEP_METHODS, is_trainer_class, methods_of
from trllint.facts.launch.backends import DEEPSPEED as LAUNCH_DEEPSPEED, Backend
from trllint.facts.markers import DEEPSPEED_INITIALIZE
from trllint.core.cst.names import ImportMap, assigned_names, call_name, dotted_name, last_attribute, matches, parameter_names
from trllint.core.prefilter import AllOf, AnyOf, Calls, Defines, Reads, Token, token_present
from trllint.core.source import SourceFile
from trllint.semantic.model import SemanticModel, imports_of
from trllint.semantic.project.summaries import ModuleFact, top_level_classes
from trllint.semantic.project.file_view import project_view

if TYPE_CHECKING:
    from trllint.semantic.project.index import Definition, ProjectView

# Members a Hugging Face PreTrainedModel has and a wrapper does not forward.
HF_MODEL_MEMBERS = frozenset(
    {
        "config",
        "generation_config",
        "name_or_path",
        "generate",
        "can_generate",
        "get_input_embeddings",
        "get_output_embeddings",
        "set_input_embeddings",
        "resize_token_embeddings",
        "gradient_checkpointing_enable",
        "gradient_checkpointing_disable",
        "enable_input_require_grads",
        "warnings_issued",
        "save_pretrained",
        "push_to_hub",
        "add_model_tags",
        "main_input_name",
    }
)

# The kinds of wrapping, by what made it.
STEP_ARGUMENT = "step-argument"  # whatever the Trainer wrapped it in: DP, DDP, FSDP or DeepSpeed
ACCELERATE = "accelerate"  # accelerator.prepare: likewise, depending on the launch
DATA_PARALLEL = "data-parallel"  # DataParallel / DistributedDataParallel
FSDP = "fsdp"
DEEPSPEED = "deepspeed"

# FSDP forwards attribute reads to the wrapped module; these still fail on sharded parameters.
_BROKEN_UNDER_FSDP = frozenset({"generate", "resize_token_embeddings", "save_pretrained", "push_to_hub"})
# A DeepSpeed engine forwards what it does not define itself; it defines ``config``.
_SHADOWED_BY_DEEPSPEED = frozenset({"config"})

# Helpers that end in `deepspeed.initialize` and return the engine (TRL's `prepare_deepspeed`, the
# trainers' `_prepare_deepspeed` copies): a DeepSpeed wrapping, whatever the launch.
DEEPSPEED_HELPERS = ("prepare_deepspeed", "_prepare_deepspeed")
# accelerate's methods that return the model they are handed wrapped (maybe sharded).
PREPARE_METHODS = ("prepare", "prepare_model")

# Attributes of transformers' Trainer that hold the wrapped model.
TRAINER_WRAPPED_ATTRIBUTES = ("self.model_wrapped", "self.deepspeed")
# The wrappers a call builds (wrapping_made_by), by their last names.
DATA_PARALLEL_WRAPPERS = ("DataParallel", "DistributedDataParallel")
FSDP_WRAPPER = "FullyShardedDataParallel"


@dataclass(frozen=True)
class Wrapping:
    """Why a model may be wrapped, and what can unwrap it."""

    kind: str
    origin: str  # for messages: "the model argument of training_step", "DistributedDataParallel(...)"
    accelerator: str | None = None  # the accelerator whose prepare() wrapped it
    # Bound inside an if/for/while/try: the model may also be unwrapped at the read.
    conditional: bool = False
    # Members the wrapped object lacks itself (a plain nn.Module of this file): reading them
    # fails unwrapped too, so the wrapper is not what breaks them.
    missing_unwrapped: frozenset[str] = frozenset()

    def breaks(self, member: str) -> bool:
        """Whether reading ``member`` through this wrapper fails or reads the wrong object."""
        if member in self.missing_unwrapped:
            return False
        if self.kind == FSDP:
            return member in _BROKEN_UNDER_FSDP
        if self.kind == DEEPSPEED:
            return member in _SHADOWED_BY_DEEPSPEED
        return member in HF_MODEL_MEMBERS

    def breaking_backends(self, member: str) -> frozenset[Backend] | None:
        """The backends under which reading ``member`` through this wrapping breaks, for a
        wrapping the launch chooses (accelerate's ``prepare``, the Trainer's step argument);
        None for a wrap the code makes itself (``DistributedDataParallel(...)``), whatever the launch.

        accelerate wraps nothing in one process; the Trainer wraps in ``DataParallel`` there
        when it sees several GPUs."""
        if self.kind not in (ACCELERATE, STEP_ARGUMENT):
            return None
        backends: set[Backend] = set()
        if member in HF_MODEL_MEMBERS and member not in self.missing_unwrapped:
            backends.add(Backend.DDP)
            if self.kind == STEP_ARGUMENT:
                backends.add(Backend.ONE_PROCESS)
        if member in _BROKEN_UNDER_FSDP:
            backends.add(Backend.FSDP)
        if member in _SHADOWED_BY_DEEPSPEED:
            backends.update(LAUNCH_DEEPSPEED)
        return frozenset(backends)

    @property
    def has_module(self) -> bool:
        """The wrapper is known to hold the model as ``.module`` (a bare wrap, not accelerate's choice)."""
        return self.kind in (DATA_PARALLEL, FSDP, DEEPSPEED)


def wrapping_made_by(value: cst.BaseExpression, imports: ImportMap, accelerators: set[str]) -> list[Wrapping | None] | None:
    """The wrapping each unpacked target of ``target = value`` gets; None if ``value`` wraps nothing.

    A single-element list applies to every target of a plain (non-tuple) assignment.
    """
    subscript_first = False
    if isinstance(value, cst.Subscript) and _is_index(value, 0) and isinstance(value.value, cst.Call):
        value, subscript_first = value.value, True
    if not isinstance(value, cst.Call):
        return None
    name = call_name(value)
    full = imports.resolve(name)
    if matches(full, "deepspeed.initialize") or (full or "").endswith("deepspeed.initialize"):
        engine = Wrapping(DEEPSPEED, "deepspeed.initialize(...)")
        # `engine, optimizer, _, _ = deepspeed.initialize(...)`: only the first is the engine.
        return [engine] if subscript_first else [engine, None, None, None]
    if subscript_first:
        return None
    if matches(full, *DATA_PARALLEL_WRAPPERS):
        return [Wrapping(DATA_PARALLEL, f"{last_attribute(full)}(...)")]
    if matches(full, FSDP_WRAPPER):
        return [Wrapping(FSDP, f"{FSDP_WRAPPER}(...)")]
    method = last_attribute(name)
    if method in DEEPSPEED_HELPERS:
        return [Wrapping(DEEPSPEED, f"{method}(...)")]
    if name and "." in name and method in PREPARE_METHODS:
        receiver = name.rsplit(".", 1)[0]
        if receiver in accelerators or "accelerator" in receiver.rsplit(".", 1)[-1].lower():
            if method == "prepare_model" and _evaluation_mode(value):
                return None  # accelerate wraps nothing for evaluation: the model comes back as is
            return [Wrapping(ACCELERATE, f"{receiver}.{method}(...)", accelerator=receiver)]
    return None


def _evaluation_mode(call: cst.Call) -> bool:
    """``prepare_model(model, device_placement, True)`` or ``evaluation_mode=True``."""
    for index, arg in enumerate(call.args):
        is_it = (arg.keyword is not None and arg.keyword.value == "evaluation_mode") or (
            arg.keyword is None and not arg.star and index == 2
        )
        if is_it:
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


def _is_index(node: cst.Subscript, index: int) -> bool:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    inner = node.slice[0].slice.value
    return isinstance(inner, cst.Integer) and inner.evaluated_value == index


def step_model_parameter(function: cst.FunctionDef) -> str | None:
    """The model parameter of a step method: ``model`` if present, else the first after ``self``."""
    names = parameter_names(function.params)
    if "model" in names:
        return "model"
    return names[1] if len(names) > 1 else None


@dataclass
class WrappingFacts:
    """Per file: the wrapping of each model-member read, keyed by the Attribute node."""

    # id(read) -> (the Attribute node, its wrapping), in the order the pass met them.
    reads: dict[int, tuple[cst.Attribute, Wrapping]] = field(default_factory=dict)
    # (id(function), parameter) -> wrapping received from some call site or the Trainer.
    parameters: dict[tuple[int, str], Wrapping] = field(default_factory=dict)
    # id(class) -> self attributes bound to a wrapped model in one of its methods.
    self_attributes: dict[int, dict[str, Wrapping]] = field(default_factory=dict)
    # id(class) -> wrapped self attributes it inherits (a base binds them, the class does not).
    inherited: dict[int, dict[str, Wrapping]] = field(default_factory=dict)

    def at(self, read: cst.Attribute) -> Wrapping | None:
        found = self.reads.get(id(read))
        return None if found is None else found[1]

    def wrapped_reads(self) -> list[tuple[cst.Attribute, Wrapping]]:
        """Every read of a member of a possibly wrapped model, with its wrapping."""
        return list(self.reads.values())


# Every source of wrapping above spells one of these in the file (aliases are imported by their
# real names): a file with none of them has no wrapped model, and is not traversed at all.
# `deepspeed.initialize` as markers.DEEPSPEED_INITIALIZE says, Trainer's engine as
# `self.deepspeed`; a training-step method is named (configured names: wrapping_markers);
# `.prepare` must not match `self.prepare_inputs_for_generation`, in every transformers model.
WRAPPING_MARKERS: tuple[Token, ...] = (
    "DataParallel",
    "model_wrapped",
    *DEFAULT_STEP_METHODS,
    *DEEPSPEED_INITIALIZE,
    *DEEPSPEED_HELPERS,
    re.compile(r"\.\s*deepspeed"),
    re.compile(r"\.\s*prepare(?:_model)?\b"),
)


# Every source of wrapping above as the names its code must spell, for a prefilter's part past
# the markers: a call of a wrapper, of deepspeed.initialize (under any alias), of a DeepSpeed
# helper or of accelerate's prepare; a read of the Trainer's wrapped attributes; a training-step
# method the file defines (a rule's configured step methods join as text). A wrapped attribute a
# class inherits from another module is the rule's `Reached` to ask.
WRAPPING_IN_CODE = (
    Calls(*DATA_PARALLEL_WRAPPERS, FSDP_WRAPPER, "initialize", *DEEPSPEED_HELPERS, *PREPARE_METHODS),
    Defines(*DEFAULT_STEP_METHODS),
    Reads(*(attribute.partition(".")[2] for attribute in TRAINER_WRAPPED_ATTRIBUTES)),
)


# A module that spells none of these binds no wrapped attribute of its own (SELF_ATTRIBUTES uses
# the default step methods, and a module read for its facts has no project to inherit one from);
# it is not parsed for a subclass's wrapped attributes.
WRAPS_A_MODEL = AllOf(AnyOf(*WRAPPING_MARKERS), AnyOf(*WRAPPING_IN_CODE))


# The names (``x``, ``self.x``) assignments in a class bind: the model's ClassFacts, read once per class.
ClassNames = Callable[[cst.ClassDef], frozenset[str]]


def wrapping_markers(step_methods: tuple[str, ...]) -> tuple[Token, ...]:
    """Prefilter tokens for a wrapped model, with the configured training-step method names."""
    return (*WRAPPING_MARKERS, *(m for m in step_methods if m not in DEFAULT_STEP_METHODS))


def wrapping_facts(source: SourceFile, step_methods: tuple[str, ...]) -> WrappingFacts:
    """Computed once per file and set of step-method names, whichever rule asks first."""
    model = SemanticModel.of(source)
    return model.once((wrapping_facts, step_methods), lambda: compute_wrapping(model, step_methods))


def is_wrapped(model: SemanticModel, read: cst.Attribute, step_methods: tuple[str, ...]) -> Wrapping | None:
    """The wrapping that may reach the model ``read`` reads a member of, with its kind."""
    return wrapping_facts(model.source, step_methods).at(read)


def compute_wrapping(model: SemanticModel, step_methods: tuple[str, ...]) -> WrappingFacts:
    source = model.source
    class_names: ClassNames = lambda cls: model.class_facts(cls).names_assigned  # one walk per class
    bases = _ProjectBases(project_view(model), class_names)
    if not any(token_present(token, source.text) for token in wrapping_markers(step_methods)):
        # No wrapping in this file; a class may still inherit one from a base in another module.
        if not bases.any_wrapped(source.module):
            return WrappingFacts()
    return _compute(source.module, model.imports, step_methods, bases, class_names)


# A same-file base chain longer than this is not followed further (cycles end anyway).
_MAX_LOCAL_BASES = 16


def _self_attributes(model: SemanticModel) -> dict[str, dict[str, Any]]:
    """Class name -> ``{"wrapped": {attribute: [kind, origin, accelerator, conditional]}, "bound":
    [attribute, ...]}``: the ``self`` attributes its methods bind to a model that may be wrapped
    (with the default step methods), and every one they bind (a base nearer the subclass that
    rebinds an attribute hides the wrapping of a farther one). A class that binds none is left out."""
    wrapping = wrapping_facts(model.source, DEFAULT_STEP_METHODS)
    answer: dict[str, dict[str, Any]] = {}
    for cls in top_level_classes(model):
        wrapped = {
            name: [w.kind, w.origin, w.accelerator, w.conditional]
            for name, w in wrapping.self_attributes.get(id(cls), {}).items()
        }
        names = model.class_facts(cls).names_assigned
        bound = sorted(n for n in names if n.startswith("self.") and n.count(".") == 1)
        answer.pop(cls.name.value, None)  # a later class of the name wins, as Python binds it
        if wrapped or bound:
            answer[cls.name.value] = {"wrapped": wrapped, "bound": bound}
    return answer


# What a module's classes bind to ``self``, wrapped or not: asked of a base class in another module.
SELF_ATTRIBUTES = ModuleFact("wrapping.self-attributes", 1, _self_attributes)


class _ProjectBases:
    """What a class's bases that live in other modules of the project bind (``SELF_ATTRIBUTES``),
    nearest first, asked once per class: (the base's name, its entry)."""

    def __init__(self, project: ProjectView | None, class_names: ClassNames) -> None:
        self.project = project
        self.class_names = class_names
        self._chains: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        self._reads: dict[int, bool] = {}

    def reads(self, cls: cst.ClassDef) -> bool:
        """``reads_member_of_an_inherited_attribute``, walked once per class."""
        if id(cls) not in self._reads:
            self._reads[id(cls)] = reads_member_of_an_inherited_attribute(cls, self.class_names(cls))
        return self._reads[id(cls)]

    def of(self, cls: cst.ClassDef) -> list[tuple[str, dict[str, Any]]]:
        if self.project is None or not cls.bases:
            return []
        if id(cls) not in self._chains:
            bases = self.project.base_classes(cls)
            chain = self._entries(bases, WRAPS_A_MODEL)
            if any(entry.get("wrapped") for _, entry in chain):
                # What the nearer bases bind hides a farther base's wrapping: all of them now.
                chain = self._entries(bases, None)
            self._chains[id(cls)] = chain
        return self._chains[id(cls)]

    def _entries(self, bases: list[Definition], deep_if: AllOf | None) -> list[tuple[str, dict[str, Any]]]:
        assert self.project is not None
        entries = []
        for base in bases:
            answer = self.project.fact(base, SELF_ATTRIBUTES, deep_if)
            if answer is not None:  # a module that cannot be parsed says nothing
                entries.append((base.name, answer.get(base.name, {})))
        return entries

    def any_wrapped(self, module: cst.Module) -> bool:
        """Some class of the file that reads a member of a ``self`` attribute has a base in another
        module that binds a wrapped attribute."""
        classes = [statement for statement in module.body if isinstance(statement, cst.ClassDef)]
        # A reading class may inherit through a base of this file: every class's bases count then.
        return any(self.reads(c) for c in classes) and any(
            entry.get("wrapped") for statement in classes for _, entry in self.of(statement)
        )


def reads_member_of_an_inherited_attribute(cls: cst.ClassDef, assigned: frozenset[str]) -> bool:
    """The class reads ``self.<attr>.config`` (or another Hugging Face member) for an attribute it
    does not bind itself: the only reads an inherited wrapped attribute can break (one the class
    binds hides what any base bound, see ``_BindingPass._inherited``). A class without one is
    not asked about its bases in other modules, which would cost a parse of each base's module
    (a model's ``PreTrainedModel`` is 270 KB of transformers; its subclasses read
    ``self.model.config`` on the ``self.model`` they built)."""
    reads = _MemberReads()
    walk.visit(cls, reads)
    return bool(reads.read) and not reads.read <= assigned


class _MemberReads(cst.CSTVisitor):
    """The ``self.<attr>`` whose Hugging Face member a class reads (a class of the module, not
    one made per call: that would be a reference cycle left for the collector)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        inner = node.value
        if (
            node.attr.value in HF_MODEL_MEMBERS
            and isinstance(inner, cst.Attribute)
            and isinstance(inner.value, cst.Name)
            and inner.value.value == "self"
        ):
            self.read.add(f"self.{inner.attr.value}")


def _from_project(attribute: list[Any], owner: str) -> Wrapping:
    """A wrapped attribute as ``SELF_ATTRIBUTES`` lists it, bound by the class ``owner``."""
    kind, origin, accelerator, conditional = attribute
    return Wrapping(kind, f"{origin} in {owner}", accelerator, bool(conditional))


def _compute(
    module: cst.Module, imports: ImportMap, step_methods: tuple[str, ...], bases: _ProjectBases, class_names: ClassNames
) -> WrappingFacts:
    facts = WrappingFacts()
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    owners: dict[int, tuple[cst.FunctionDef, cst.ClassDef | None]] = {id(f): (f, None) for f in functions.values()}
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            owners.update((id(m), (m, statement)) for m in methods_of(statement).values())
    plain = _plain_module_classes(module, class_names)
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    binding_pass = _BindingPass(facts, imports, step_methods, functions, plain, classes, bases, class_names)
    walk.visit(module, binding_pass)
    # A function walked before a call handed it a wrapped model is walked again, alone; the facts
    # only grow, so this ends (the bound is a guard: one extra round is the usual case).
    for _ in range(12):
        stale = [owners[i] for i in binding_pass.stale if i in owners]
        if not stale:
            break
        binding_pass = _BindingPass(facts, imports, step_methods, functions, plain, classes, bases, class_names)
        binding_pass.visited = set(owners)
        for function, cls in stale:
            binding_pass.classes = [cls]
            walk.visit(function, binding_pass)
    return facts


def _plain_module_classes(module: cst.Module, class_names: ClassNames) -> dict[str, frozenset[str]]:
    """Classes of this file built on ``nn.Module`` alone, with the Hugging Face members they lack
    (``PolicyAndValueWrapper(policy, value_model)`` has no ``config``)."""
    plain: dict[str, frozenset[str]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef) or not statement.bases:
            continue
        if any(last_attribute(dotted_name(base.value)) != "Module" for base in statement.bases):
            continue
        defined = set(methods_of(statement)) | {
            name.split(".", 1)[-1] for name in class_names(statement)
        }
        plain[statement.name.value] = HF_MODEL_MEMBERS - defined
    return plain


@dataclass
class _Scope:
    function: cst.FunctionDef | None
    cls: cst.ClassDef | None  # the class this function is a method of
    bindings: dict[str, Wrapping | None] = field(default_factory=dict)
    accelerators: set[str] = field(default_factory=set)
    branch_depth: int = 0  # how many if/for/while/try blocks hold the current statement
    # Names bound to an instance of a plain nn.Module class of this file: the members it lacks.
    plain: dict[str, frozenset[str]] = field(default_factory=dict)


class _BindingPass(cst.CSTVisitor):
    def __init__(
        self,
        facts: WrappingFacts,
        imports: ImportMap,
        step_methods: tuple[str, ...],
        functions: dict[str, cst.FunctionDef],
        plain: dict[str, frozenset[str]],
        classes: dict[str, cst.ClassDef],
        bases: _ProjectBases,
        class_names: ClassNames,
    ) -> None:
        super().__init__()
        self.module_classes: dict[str, cst.ClassDef] = classes
        self.project_bases: _ProjectBases = bases
        self.class_names = class_names
        self._bound: dict[int, frozenset[str]] = {}
        self.plain_classes: dict[str, frozenset[str]] = plain
        self.facts = facts
        self.imports = imports
        self.step_methods = step_methods
        self.functions = functions
        self.scopes: list[_Scope] = [_Scope(None, None)]
        self.classes: list[cst.ClassDef | None] = []
        self.visited: set[int] = set()  # functions walked so far
        self.stale: set[int] = set()  # functions walked before they received a new wrapping
        # id(class) -> its methods by name, and the ids of every function in its body: read
        # once per class, not at each call or method (quadratic in the size of a class).
        self._methods: dict[int, dict[str, cst.FunctionDef]] = {}
        self._members: dict[int, set[int]] = {}

    # ---- scopes -------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        cls = self.classes[-1] if self.classes and self._is_method_of(node, self.classes[-1]) else None
        scope = _Scope(node, cls)
        if cls is not None and node.name.value != "__init__":
            scope.bindings.update(self._inherited(cls))
            scope.bindings.update(self.facts.self_attributes.get(id(cls), {}))
        for name in parameter_names(node.params):
            received = self.facts.parameters.get((id(node), name))
            if received is not None:
                scope.bindings[name] = received
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
        if isinstance(value, cst.Call) and matches(self.imports.resolve(call_name(value)), "accelerate.Accelerator", "Accelerator"):
            scope.accelerators.update(n for n in assigned_names(target) if "." not in n or n.startswith("self."))
        lacking = self._lacking_members(target, value, made)
        if isinstance(target, (cst.Tuple, cst.List)) and made is not None and len(made) > 1:
            elements = [e.value for e in target.elements]
            for index, element in enumerate(elements):
                wrapping = made[index] if index < len(made) else None
                for name in assigned_names(element):
                    self._set(scope, name, wrapping, lacking.get(name))
            return
        for index, name in enumerate(assigned_names(target)):
            wrapping = None
            if made is not None:
                # `model, opt = accelerator.prepare(model, opt)`: every element comes back prepared.
                # `x = deepspeed.initialize(...)` binds the whole tuple, not the engine.
                wrapping = made[0] if len(made) == 1 else None
            self._set(scope, name, wrapping, lacking.get(name))

    def _lacking_members(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, made: list[Wrapping | None] | None
    ) -> dict[str, frozenset[str]]:
        """For each name ``target`` binds to an instance of a plain class (``PolicyAndValueWrapper(...)``
        or ``accelerator.prepare(<such a name>, ...)``): the members that instance lacks."""
        if not isinstance(value, cst.Call):
            return {}
        scope = self.scopes[-1]
        callee = call_name(value)
        if callee in self.plain_classes:
            return {name: self.plain_classes[callee] for name in assigned_names(target)}
        if made is None:
            return {}
        arguments = [dotted_name(a.value) for a in value.args if a.keyword is None and not a.star]
        elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        lacking: dict[str, frozenset[str]] = {}
        for element, argument in zip(elements, arguments):
            if argument in scope.plain:
                lacking.update((name, scope.plain[argument]) for name in assigned_names(element))
        return lacking

    def _set(self, scope: _Scope, name: str, wrapping: Wrapping | None, lacking: frozenset[str] | None = None) -> None:
        if lacking is None:
            scope.plain.pop(name, None)
        else:
            scope.plain[name] = lacking
            if wrapping is not None:
                wrapping = replace(wrapping, missing_unwrapped=lacking)
        if wrapping is not None and scope.branch_depth:
            wrapping = replace(wrapping, conditional=True)
        scope.bindings[name] = wrapping
        if wrapping is not None and name.startswith("self.") and name.count(".") == 1 and scope.cls is not None:
            attributes = self.facts.self_attributes.setdefault(id(scope.cls), {})
            if name not in attributes:
                attributes[name] = wrapping
                # Methods walked before this one read self.<name> without knowing it is wrapped.
                methods = self._methods_of(scope.cls).values()
                self.stale.update(id(m) for m in methods if m is not scope.function and id(m) in self.visited)

    def visit_If(self, node: cst.If) -> None:
        self.scopes[-1].branch_depth += 1

    def leave_If(self, original_node: cst.If) -> None:
        self.scopes[-1].branch_depth -= 1

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
        self._bind(node.target, None)
        self.scopes[-1].branch_depth += 1

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind(original_node.target, original_node.value)

    # ---- reads and calls ----------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in HF_MODEL_MEMBERS:
            return
        receiver = dotted_name(node.value)
        if receiver is None or (receiver.count(".") > 1) or ("." in receiver and not receiver.startswith("self.")):
            return
        wrapping = self._lookup(receiver)
        if wrapping is not None:
            self.facts.reads[id(node)] = (node, wrapping)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self.scopes[-1]
        if scope.cls is not None and scope.function is not None and scope.function.name.value == "__init__":
            if is_super_init(node):
                # From here on, ``self`` holds what the bases' ``__init__`` bound.
                scope.bindings.update(self._inherited(scope.cls))
        callee, skip_self = self._callee(node)
        if callee is None:
            return
        parameters = parameter_names(callee.params)[1 if skip_self else 0 :]
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for index, arg in enumerate(node.args):
            if arg.star:
                continue
            if arg.keyword is not None:
                parameter = arg.keyword.value
            else:
                position = positional.index(arg)
                if position >= len(parameters):
                    continue
                parameter = parameters[position]
            name = dotted_name(arg.value)
            wrapping = self._lookup(name) if name else None
            key = (id(callee), parameter)
            if wrapping is not None and key not in self.facts.parameters and parameter in parameter_names(callee.params):
                self.facts.parameters[key] = wrapping
                if id(callee) in self.visited:
                    self.stale.add(id(callee))

    def _callee(self, call: cst.Call) -> tuple[cst.FunctionDef | None, bool]:
        name = call_name(call)
        if name is None:
            return None, False
        scope = self.scopes[-1]
        if name.startswith("self.") and name.count(".") == 1 and scope.cls is not None:
            return self._methods_of(scope.cls).get(name[5:]), True
        if "." not in name:
            return self.functions.get(name), False
        return None, False

    # ---- base classes -------------------------------------------------------------------

    def _inherited(self, cls: cst.ClassDef) -> dict[str, Wrapping]:
        """The wrapped ``self`` attributes ``cls`` inherits: bound wrapped by a base class (of this
        file, or of another module of the project), nearest first, and bound by neither the class
        itself nor a nearer base (``self.model = model`` after ``super().__init__()`` ends it)."""
        found: dict[str, Wrapping] = {}
        bound = set(self._bound_by(cls))

        def take(wrapped: dict[str, Wrapping], binds: Iterable[str]) -> None:
            for name, wrapping in wrapped.items():
                if name not in bound:
                    found.setdefault(name, wrapping)
            bound.update(binds)

        chain, seen = [cls], {id(cls)}
        reads = self.project_bases.reads(cls)
        for current in chain:
            for base in current.bases:
                local = self.module_classes.get(dotted_name(base.value) or "")
                if local is not None and id(local) not in seen and len(chain) < _MAX_LOCAL_BASES:
                    seen.add(id(local))
                    chain.append(local)
                    wrapped = self.facts.self_attributes.get(id(local), {})
                    owner = local.name.value
                    take({n: replace(w, origin=f"{w.origin} in {owner}") for n, w in wrapped.items()}, self._bound_by(local))
            for owner, entry in self.project_bases.of(current) if reads else ():
                wrapped = {n: _from_project(w, owner) for n, w in entry.get("wrapped", {}).items()}
                take(wrapped, entry.get("bound", ()))
        self.facts.inherited[id(cls)] = found
        return found

    def _bound_by(self, cls: cst.ClassDef) -> frozenset[str]:
        """The ``self.<name>`` attributes the class's own code binds, wrapped or not."""
        bound = self._bound.get(id(cls))
        if bound is None:
            names = self.class_names(cls)
            bound = self._bound[id(cls)] = frozenset(n for n in names if n.startswith("self.") and n.count(".") == 1)
        return bound

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
