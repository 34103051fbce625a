"""Which models of a file may be wrapped, at each read of a Hugging Face member (TRL001's fact).

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

Bindings are followed in source order within a function (``binding_pass``); the facts are
computed once per file, in a few plain traversals (no scope or qualified-name metadata).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import libcst as cst

from trllint.core.cst import walk
from trllint.core.cst.names import ImportMap, dotted_name, last_attribute
from trllint.core.prefilter import AllOf, AnyOf, Calls, Defines, Reads, Token, token_present
from trllint.core.source import SourceFile
from trllint.facts.markers import DEEPSPEED_INITIALIZE
from trllint.facts.module_names import module_names
from trllint.facts.ranks import RankFacts, rank_facts
from trllint.facts.wrapping import (
    DATA_PARALLEL_WRAPPERS,
    DEEPSPEED_HELPERS,
    FSDP_WRAPPER,
    HF_MODEL_MEMBERS,
    PREPARE_METHODS,
    TRAINER_WRAPPED_ATTRIBUTES,
    Wrapping,
)
from trllint.rules.trl001_wrapped_model_attribute.library_bases import LIBRARY_TRAINER_NAMES
from trllint.rules.trl001_wrapped_model_attribute.returned_wrappers import SPELLS_A_WRAPPER
from trllint.rules.trl001_wrapped_model_attribute.binding_pass import BindingPass
from trllint.rules.trl001_wrapped_model_attribute.binding_records import WrappingFacts
from trllint.rules.trl001_wrapped_model_attribute.inherited_wrappings import ClassNames
from trllint.semantic.context import DEFAULT_STEP_METHODS, methods_of
from trllint.semantic.model import SemanticModel
from trllint.semantic.project.file_view import project_reaches, project_view
from trllint.semantic.project.summaries import ModuleFact, top_level_classes

if TYPE_CHECKING:
    from trllint.semantic.project.index import Definition, ProjectView


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
    LIBRARY_TRAINER_NAMES,
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
    bases = ProjectBases(project_view(model), class_names)
    if not any(token_present(token, source.text) for token in wrapping_markers(step_methods)):
        # No wrapping in this file; a class may still inherit one from a base in another module,
        # or a helper of the project return one.
        if not bases.any_wrapped(source.module) and not project_reaches(model, SPELLS_A_WRAPPER):
            return WrappingFacts()
    return _compute(source.module, model.imports, step_methods, bases, class_names, rank_facts(model))


def _self_attributes(model: SemanticModel) -> dict[str, dict[str, Any]]:
    """Class name -> ``{"wrapped": {attribute: [kind, origin, accelerator, conditional]}, "bound":
    [attribute, ...], "modules": [attribute, ...]}``: the ``self`` attributes its methods bind to
    a model that may be wrapped (with the default step methods), every one they bind (a base
    nearer the subclass that rebinds an attribute hides the wrapping of a farther one), and those
    of them the module shows hold an ``nn.Module`` (``self.model.parameters()``: a subclass that
    prepares the attribute prepares a model). A class that binds none is left out."""
    wrapping = wrapping_facts(model.source, DEFAULT_STEP_METHODS)
    shown = module_names(model)
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
            modules = [name for name in bound if name in shown]
            answer[cls.name.value] = {"wrapped": wrapped, "bound": bound, "modules": modules}
    return answer


# What a module's classes bind to ``self``, wrapped or not: asked of a base class in another module.
SELF_ATTRIBUTES = ModuleFact("wrapping.self-attributes", 4, _self_attributes)


def _handed_to_methods(model: SemanticModel) -> dict[str, list[list[Any]]]:
    """Method name -> ``[[position or keyword, kind, origin, accelerator, conditional], ...]``: the
    possibly wrapped models the module hands to methods it does not define (with the default
    step methods): a class of another module that keeps the argument then holds the wrapper."""
    wrapping = wrapping_facts(model.source, DEFAULT_STEP_METHODS)
    return {
        method: [[at, w.kind, w.origin, w.accelerator, w.conditional] for at, w in handed]
        for method, handed in wrapping.handed_to_methods.items()
    }


# What a module hands to other classes' methods wrapped: asked of a module that calls a method by
# which a base class keeps an argument (``self.model.set_prepared_model(results[0])``).
HANDED_TO_METHODS = ModuleFact("wrapping.handed-to-methods", 1, _handed_to_methods)


def shown_a_module_by_a_base(model: SemanticModel, read: cst.Attribute) -> bool:
    """``read`` reads a member of ``self.<attribute>`` that a base class of its class, in another
    module of the project, binds and shows holds an ``nn.Module``: the same object, on the same
    instance (trlx's ``AccelerateRLModel`` builds ``self.model`` and hands its ``parameters()`` to
    the optimizer; its subclasses prepare it)."""
    receiver = dotted_name(read.value) or ""
    cls = model.context.enclosing_class(read)
    project = project_view(model)
    if project is None or cls is None or not receiver.startswith("self.") or receiver.count(".") != 1:
        return False
    for base in project.base_classes(cls):
        answer = project.fact(base, SELF_ATTRIBUTES)
        if answer is not None and receiver in answer.get(base.name, {}).get("modules", ()):
            return True
    return False


class ProjectBases:
    """What a class's bases that live in other modules of the project bind (``SELF_ATTRIBUTES``),
    nearest first, asked once per class: (the base's name, its entry)."""

    def __init__(self, project: ProjectView | None, class_names: ClassNames) -> None:
        self.project = project
        self.class_names = class_names
        self._chains: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        self._reads: dict[int, frozenset[str]] = {}
        self._receivers: dict[int, frozenset[str]] = {}
        self._kept: dict[int, dict[str, tuple[Wrapping, frozenset[str]]]] = {}
        self._subclasses: dict[int, list[tuple[Definition, dict[str, Any]]]] = {}

    def member_reads(self, cls: cst.ClassDef) -> frozenset[str]:
        """The ``self.<attr>`` whose Hugging Face member the class reads, walked once per class."""
        self._walk_reads(cls)
        return self._reads[id(cls)]

    def receivers(self, cls: cst.ClassDef) -> frozenset[str]:
        """The ``self.<attr>`` whose members, any of them, the class reads."""
        self._walk_reads(cls)
        return self._receivers[id(cls)]

    def _walk_reads(self, cls: cst.ClassDef) -> None:
        if id(cls) not in self._reads:
            reads = _MemberReads()
            walk.visit(cls, reads)
            self._reads[id(cls)] = frozenset(reads.read)
            self._receivers[id(cls)] = frozenset(reads.receivers)

    def kept(self, cls: cst.ClassDef) -> dict[str, tuple[Wrapping, frozenset[str]]]:
        """The ``self`` attributes that a base class in another module keeps from a method's
        argument (``def set_prepared_model(self, model): self.model = model``), where some module
        of the project hands that method a possibly wrapped model (the trainer's
        ``self.model.set_prepared_model(accelerator.prepare(...)[0])``), nearest base first, each
        with the methods the bases run while they set the attribute up themselves (``load_model``
        calls ``self.post_model_load_setup()``: the model is the loaded one there). Only for an
        attribute whose member the class reads and which it does not bind itself, and a keeper
        neither the class nor a nearer base overrides. The attribute may hold the wrapper from
        the hand-off on, so the wrapping is conditional."""
        if self.project is None or not cls.bases:
            return {}
        if id(cls) not in self._kept:
            found: dict[str, tuple[Wrapping, frozenset[str]]] = {}
            read = {name[len("self.") :] for name in self.receivers(cls) - self.class_names(cls)}
            bases = self.project.base_classes(cls) if read else []
            overridden = set(methods_of(cls))
            keepers = []
            for base in bases:
                keepers.extend((base, k) for k in base.keepers if k.attribute in read and k.method not in overridden)
                overridden.update(base.methods)
            handed = self._handed({keeper.method for _, keeper in keepers}) if keepers else {}
            for base, keeper in keepers:
                setting_up = frozenset(m for b in bases for a, m in b.setting_up if a == keeper.attribute)
                for module, at, wrapping in handed.get(keeper.method, ()):
                    if at in (keeper.parameter, keeper.position):
                        origin = f"{wrapping.origin} handed to {keeper.method}() in {module}, kept by {base.name}"
                        found.setdefault(f"self.{keeper.attribute}", (replace(wrapping, origin=origin), setting_up))
            self._kept[id(cls)] = found
        return self._kept[id(cls)]

    def _handed(self, methods: set[str]) -> dict[str, list[tuple[str, int | str, Wrapping]]]:
        """Method name -> (the module, the argument's position or keyword, its wrapping) for each
        call of one of ``methods`` in the project handed a possibly wrapped model."""
        from trllint.semantic.project.index import Definition

        assert self.project is not None
        handed: dict[str, list[tuple[str, int | str, Wrapping]]] = {}
        for path in self.project.modules_calling(methods):
            answer = self.project.fact(Definition(path, ""), HANDED_TO_METHODS, WRAPS_A_MODEL) or {}
            for method in methods & answer.keys():
                for at, kind, origin, _accelerator, _conditional in answer[method]:
                    # The accelerator that prepared it is the caller's (the trainer's
                    # `self.accelerator`), not one this class holds: no fix may name it.
                    wrapping = Wrapping(kind, origin, None, True, other_module=True)
                    handed.setdefault(method, []).append((self.project.relative(path), at, wrapping))
        return handed

    def reads(self, cls: cst.ClassDef) -> bool:
        """The class reads a Hugging Face member of a ``self`` attribute it does not bind itself:
        the only reads an inherited wrapped attribute can break (one the class binds hides what
        any base bound, see ``BindingPass._inherited``). A class without one is not asked about
        its bases in other modules, which would cost a parse of each base's module (a model's
        ``PreTrainedModel`` is 270 KB of transformers; its subclasses read ``self.model.config``
        on the ``self.model`` they built)."""
        read = self.member_reads(cls)
        return bool(read) and not read <= self.class_names(cls)

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

    def subclasses(self, cls: cst.ClassDef) -> list[tuple[Definition, dict[str, Any]]]:
        """What the classes that modules beside the file derive from ``cls`` (a class at the top
        of the file) bind (``SELF_ATTRIBUTES``), asked only of a class that reads a Hugging Face
        member of a ``self`` attribute: (the subclass, its entry)."""
        if self.project is None:
            return []
        if id(cls) not in self._subclasses:
            entries = []
            for subclass in self.project.subclasses_beside([cls.name.value]) if self.member_reads(cls) else ():
                answer = self.project.fact(subclass, SELF_ATTRIBUTES, WRAPS_A_MODEL)
                if answer is not None:
                    entries.append((subclass, answer.get(subclass.name, {})))
            self._subclasses[id(cls)] = entries
        return self._subclasses[id(cls)]

    def any_wrapped(self, module: cst.Module) -> bool:
        """Some class of the file that reads a member of a ``self`` attribute has a base in another
        module that binds a wrapped attribute or keeps one handed to it, or a subclass beside the
        file binds one."""
        classes = [statement for statement in module.body if isinstance(statement, cst.ClassDef)]
        # A reading class may inherit through a base of this file: every class's bases count then.
        inherited = any(self.reads(c) for c in classes) and any(
            entry.get("wrapped") for statement in classes for _, entry in self.of(statement)
        )
        if inherited or any(self.kept(c) for c in classes):
            return True
        return any(entry.get("wrapped") for c in classes for _, entry in self.subclasses(c))


class _MemberReads(cst.CSTVisitor):
    """The ``self.<attr>`` whose Hugging Face member, or any member, a class reads (a class of
    the module, not one made per call: that would be a reference cycle left for the collector)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()
        self.receivers: set[str] = set()  # the self.<attr> of any member read

    def visit_Attribute(self, node: cst.Attribute) -> None:
        inner = node.value
        if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
            self.receivers.add(f"self.{inner.attr.value}")
            if node.attr.value in HF_MODEL_MEMBERS:
                self.read.add(f"self.{inner.attr.value}")


def _compute(
    module: cst.Module,
    imports: ImportMap,
    step_methods: tuple[str, ...],
    bases: ProjectBases,
    class_names: ClassNames,
    ranks: RankFacts,
) -> WrappingFacts:
    facts = WrappingFacts()
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    owners: dict[int, tuple[cst.FunctionDef, cst.ClassDef | None]] = {id(f): (f, None) for f in functions.values()}
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            owners.update((id(m), (m, statement)) for m in methods_of(statement).values())
    plain = _plain_module_classes(module, class_names)
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    binding_pass = BindingPass(facts, imports, step_methods, functions, plain, classes, bases, class_names, ranks)
    walk.visit(module, binding_pass)
    # A function walked before a call handed it a wrapped model is walked again, alone; the facts
    # only grow, so this ends (the bound is a guard: one extra round is the usual case).
    for _ in range(12):
        stale = [owners[i] for i in binding_pass.stale if i in owners]
        if not stale:
            break
        binding_pass = BindingPass(facts, imports, step_methods, functions, plain, classes, bases, class_names, ranks)
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
