"""TRL001 wrapped-model-attribute: a Hugging Face model member read through a DDP/DeepSpeed wrapper."""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst
from libcst.metadata import PositionProvider

from trllint.core.cst import walk
from trllint.core.findings import ReasonKind
from trllint.semantic.context import (
    CONTEXT_METADATA,
    is_trainer_class,
    methods_of,
    step_methods,
)
from trllint.semantic.model import ClassFacts, SemanticModel
from trllint.core.cst.names import ImportMap, argument, assigned_names, call_name, dotted_name, parameter_names
from trllint.facts.accelerators import accelerator_in_scope, accelerator_may_be_none
from trllint.rules.trl001_wrapped_model_attribute.neighbours import neighbour_through_wrapper
from trllint.core.findings import Evidence
from trllint.facts.launch.model import launch_of
from trllint.facts.launch.branches import unwrapped_at
from trllint.facts.launch.backends import Backend
from trllint.facts.module_names import shown_a_module
from trllint.facts.wrapping import (
    ACCELERATE,
    DATA_PARALLEL,
    FSDP,
    HF_MODEL_MEMBERS,
    STEP_ARGUMENT,
    TRAINER_WRAPPED_ATTRIBUTES,
    Wrapping,
    wrapping_made_by,
)
from trllint.rules.trl001_wrapped_model_attribute.binding_pass import is_super_init
from trllint.rules.trl001_wrapped_model_attribute.wrapped_models import (
    WRAPPING_IN_CODE,
    WRAPPING_MARKERS,
    WRAPS_A_MODEL,
    shown_a_module_by_a_base,
    wrapping_facts,
)
from trllint.rules.trl001_wrapped_model_attribute.library_bases import LIBRARY_TRAINER_NAMES
from trllint.rules.trl001_wrapped_model_attribute.returned_wrappers import SPELLS_A_WRAPPER
from trllint.rules.trl001_wrapped_model_attribute.wrapper_members import (
    answered_by,
    defined_by_own_class,
    in_an_else_arm,
    is_written,
    runs_outside_the_wrapper,
    through,
    written_on_wrapper,
)
from trllint.rule.base import AllOf, AnyOf, Edit, FindingKind, Fix, Reached, Reads, Rule, Setting

# What a subclass reads on an attribute a base class may have wrapped: `self.model.config`
# (a model's own `self.config` is no such read). Without it a file's classes are not asked
# about their bases in other modules, which costs a summary of each base's module.
_MEMBER_OF_A_SELF_ATTRIBUTE = re.compile(r"self\.\w+\.(?:" + "|".join(sorted(HF_MODEL_MEMBERS)) + r")\b")

# Reading these through the unwrapped module can still differ from reading them on the wrapper
# under DeepSpeed ZeRO-3 / FSDP: the module's parameters are sharded, generation needs them whole.
_NEEDS_WHOLE_PARAMETERS = frozenset({"generate"})
_DDP = frozenset({Backend.DDP})
# A function of the project that the file calls spells DDP or DataParallel.
_HELPER_WRAPS = Reached(SPELLS_A_WRAPPER, calls=True)
# A class of the file inherits a wrapped attribute: a base class in another module, or a subclass
# beside the file, binds one, or a module of the project that wraps a model hands it to a method by
# which a base keeps it (SimpleTuner's trainer: `self.model.set_prepared_model(results[0])`).
_INHERITS_A_WRAPPER = Reached(WRAPS_A_MODEL, calls=False, reading=HF_MODEL_MEMBERS, subclasses=True, kept=True)


class Unsafe(ReasonKind):
    """Why reading a member through the unwrapped module may still differ from the wrapper."""

    NEEDS_WHOLE_PARAMETERS = (
        "{member}() on the unwrapped module needs every parameter on this rank ({kind} may shard them)"
    )
    NEIGHBOUR_STILL_WRAPPED = "{read} on line {line} still goes through the wrapper: the fix repairs this read and leaves that one"
    OUTSIDE_THE_WRAPPER = (
        "{call}(...) then runs on the bare module, outside the wrapper's forward: DDP does not "
        "synchronise what it computes, DataParallel runs it on one device"
    )
    ACCELERATOR_MAY_BE_NONE = (
        "{missing}: the fixed code would call unwrap_model on None where the original ran"
    )


class WrappedModelAttribute(Rule):
    code = "TRL001"
    name = "wrapped-model-attribute"
    message = (
        "model.config on a model that may be wrapped by DDP/DeepSpeed; "
        "read it from accelerator.unwrap_model(model) or cache it in __init__"
    )
    fixable = "sometimes"
    # Each kind graduates on its own (graduation.toml, written from the precision benchmark).
    kinds = {
        "step-model": FindingKind("the model a Trainer hands its step methods, which it wraps for any multi-GPU run"),
        "wrapped-here": FindingKind("a model the code wraps itself (DistributedDataParallel, FSDP, deepspeed.initialize)"),
        "prepared": FindingKind("a model accelerator.prepare wrapped, under a launch that shows the wrapper"),
        "prepared-launch-unknown": FindingKind(
            "a model accelerator.prepare wrapped, where no launch shows the wrapper", unproven=True
        ),
        # A library trainer the class inherits from prepared the attribute (TRL's PPOTrainer).
        "library-prepared": FindingKind(
            "a model a library trainer base prepared with accelerate, under a launch that shows the wrapper"
        ),
        "library-prepared-launch-unknown": FindingKind(
            "a model a library trainer base prepared with accelerate, where no launch shows the wrapper", unproven=True
        ),
        # The model's own members (a submodule, a method, an attribute), which DDP and
        # DataParallel forward none of; DeepSpeed and FSDP forward them.
        "own-member-wrapped-here": FindingKind("a model's own member through a DDP or DataParallel the code makes"),
        "own-member-wrapped-elsewhere": FindingKind(
            "a model's own member through a DDP or DataParallel made in another module of the project"
        ),
        "own-member-wrapped-by-helper": FindingKind(
            "a model's own member through a DDP or DataParallel a function of this file returns"
        ),
        "own-member-prepared": FindingKind("a model's own member through accelerator.prepare, under a launch that shows DDP"),
        "own-member-prepared-launch-unknown": FindingKind(
            "a model's own member through accelerator.prepare, where no launch shows DDP", unproven=True
        ),
        # The prepared object is an instance of an nn.Module class of this file that defines the
        # member: the file shows both that it is a module and that the member is its own.
        "own-class-member-prepared": FindingKind(
            "a member the file's own nn.Module class defines, through accelerator.prepare, under a launch that shows DDP"
        ),
        "own-class-member-prepared-launch-unknown": FindingKind(
            "a member the file's own nn.Module class defines, through accelerator.prepare, where no launch shows DDP",
            unproven=True,
        ),
    }
    # Something that can wrap a model: every finding reads a member through one.
    prefilter = AllOf(
        # A configured step method wraps too; a subclass may inherit a wrapped attribute from a
        # base class in another module of the project (`class MyTrainer(BaseTrainer):`), which
        # then spells a wrapping (a summary of a module without one finds none), and only for a
        # class that reads `self.<attr>.config` on an attribute it does not bind itself. The
        # cheap part first: `Reached` costs CPython's parse of the file, and the modules' outlines.
        # A helper of the project may make the wrapper (`model = setup_ddp(model)`), and a
        # module anywhere in it may hand one to a method by which a base class keeps it.
        AnyOf(
            *WRAPPING_MARKERS, _MEMBER_OF_A_SELF_ATTRIBUTE, _HELPER_WRAPS, _INHERITS_A_WRAPPER, setting="training-step-methods"
        ),
        # The name of what wraps a model (`DataParallelKwargs` is no `DataParallel`), or a base
        # class in another module, or a subclass beside the file, binds a wrapped attribute.
        AnyOf(
            *WRAPPING_IN_CODE,
            LIBRARY_TRAINER_NAMES,  # a library trainer base prepares the model
            _INHERITS_A_WRAPPER,
            _HELPER_WRAPS,
            setting="training-step-methods",
        ),
    )
    settings_schema = {
        "training-step-methods": Setting(
            list, (), "extra Trainer method names whose model argument is the wrapped model", item_kind=str
        )
    }
    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, *CONTEXT_METADATA)

    def check_module(self, model: SemanticModel) -> None:
        """Each read of a member of a model that may be wrapped, as the wrapping facts found them
        (no traversal of its own: the facts' pass met every attribute already)."""
        self.context = model.context
        self.wrapping = wrapping_facts(self.source, step_methods(self.settings))
        for read, wrapping in self.wrapping.wrapped_reads():
            self._check_read(read, wrapping)
        for read, wrapping in self.wrapping.other_reads.values():
            self._check_hidden_read(read, wrapping)
        for call, handed, member, wrapping in self.wrapping.handed_reads.values():
            self._check_handed_read(call, handed, member, wrapping)

    def _check_read(self, node: cst.Attribute, wrapping: Wrapping) -> None:
        member = node.attr.value
        given = self._handed_state_dict(node)
        if not wrapping.breaks(member, given) or self._guarded_by_hasattr(node):
            return
        if unwrapped_at(self.model, node.value, prepared=wrapping.kind == ACCELERATE):
            return  # the other arm of a test for the wrapper: the model is bare here
        evidence: tuple[Evidence, ...] = ()
        backends = wrapping.breaking_backends(member, given)
        if backends is not None:  # the launch chooses the wrapper
            launch = launch_of(self.model, node)
            if not launch.possible(backends):
                return  # no launch of this code wraps the model in a wrapper that hides the member
            evidence = launch.shown(backends)
        receiver = self.source.module.code_for_node(node.value)
        fix = self._cache_fix(node, receiver, wrapping) if _is_the_trainers_model(receiver, wrapping) else None
        if fix is not None:
            advice = f"cache it in __init__ as {fix.edits[0].content}, as TRL does"
        else:
            unwrapped = self._unwrapped(node, receiver, wrapping)
            if unwrapped is None and wrapping.kind == FSDP:
                advice = f"call it on the whole model, inside FSDP.summon_full_params({receiver})"
            elif unwrapped is None:
                advice = "read it from accelerator.unwrap_model(...) or cache it in __init__"
            else:
                advice = f"read it from {unwrapped}"
                start, end = self.span_of(node.value)
                unsafe = member in _NEEDS_WHOLE_PARAMETERS and wrapping.kind != DATA_PARALLEL
                reason = Unsafe.NEEDS_WHOLE_PARAMETERS.text(member=member, kind=wrapping.kind) if unsafe else None
                accelerator = unwrapped.split(".unwrap_model(", 1)[0] if ".unwrap_model(" in unwrapped else None
                # The fix names an accelerator: it stands on that accelerator being bound on every path.
                missing = accelerator_may_be_none(self.model, accelerator, node) if accelerator else None
                if missing is not None:
                    reason = Unsafe.ACCELERATOR_MAY_BE_NONE.text(missing=missing)
                fix = self.fix(Edit(start, end, unwrapped), reason=reason)
        message = f"{receiver}.{member} on a model that may be wrapped ({wrapping.origin}); {advice}"
        if fix is not None and fix.applicability == "safe":
            neighbour = neighbour_through_wrapper(self.model, node, receiver, HF_MODEL_MEMBERS)
            if neighbour is not None:
                line = self.get_metadata(PositionProvider, neighbour).start.line
                reason = Unsafe.NEIGHBOUR_STILL_WRAPPED.text(read=f"{receiver}.{neighbour.attr.value}", line=line)
                fix = replace(fix, applicability="unsafe", reason=reason)
        self.report(node, message, fix=fix, evidence=evidence, kind=_kind_of(wrapping, evidence))

    def _handed_state_dict(self, node: cst.Attribute) -> bool:
        """``node`` is called with ``state_dict=`` (``model.save_pretrained(path, state_dict=full)``)."""
        call = self.context.parent(node)
        return isinstance(call, cst.Call) and call.func is node and argument(call, "state_dict") is not None

    def _check_hidden_read(self, node: cst.Attribute, wrapping: Wrapping) -> None:
        """A member of the model's own (a submodule, a method, an attribute its ``__init__`` set)
        read through DDP or DataParallel, which answer only what they and ``nn.Module`` define."""
        member = node.attr.value
        if member in answered_by(wrapping) or is_written(self.model, node) or self._guarded_by_hasattr(node):
            return
        receiver = self.source.module.code_for_node(node.value)
        if member in written_on_wrapper(self.model, self.wrapping, receiver):
            return
        # Asked only where accelerate may have prepared something other than a model.
        module_shown = wrapping.kind == ACCELERATE and (
            shown_a_module(self.model, receiver) or shown_a_module_by_a_base(self.model, node)
        )
        read = f"{receiver}.{member}"
        self._report_unforwarded(node, node.value, member, wrapping, module_shown, read, "read it from")

    def _check_handed_read(self, call: cst.Call, handed: cst.BaseExpression, member: str, wrapping: Wrapping) -> None:
        """A library function handed the model reads a member of it (peft's
        ``get_peft_model_state_dict(model)`` reads ``model.peft_config``): through DDP or
        DataParallel that read fails as the code's own would. The function takes only modules."""
        code = self.source.module.code_for_node
        read = f"{code(call.func)}(...) reads {code(handed)}.{member}"
        self._report_unforwarded(handed, handed, member, wrapping, True, read, "hand it")

    def _report_unforwarded(
        self,
        node: cst.BaseExpression,
        model_read: cst.BaseExpression,
        member: str,
        wrapping: Wrapping,
        module_shown: bool,
        read: str,
        verb: str,
    ) -> None:
        """Report ``read`` of ``member`` on the model ``model_read`` holds, at ``node``, unless the
        model is bare there or no launch wraps it in a wrapper that hides the member.
        ``module_shown``: the file shows an accelerate-prepared ``model_read`` is a model."""
        if unwrapped_at(self.model, model_read, prepared=wrapping.kind == ACCELERATE):
            return
        if wrapping.conditional and in_an_else_arm(self.model, node):
            return  # the arm that handles the model the branch left bare
        receiver = self.source.module.code_for_node(model_read)
        evidence: tuple[Evidence, ...] = ()
        kind = "own-member-wrapped-elsewhere" if wrapping.other_module else "own-member-wrapped-here"
        if wrapping.local_helper:
            kind = "own-member-wrapped-by-helper"
        if wrapping.kind == ACCELERATE:
            # The file's own class defining the member is the stronger evidence: it names the kind.
            own_class = defined_by_own_class(self.model, wrapping, member)
            if own_class is None and not module_shown:
                return  # accelerate prepares optimizers, loaders and schedulers too
            launch = launch_of(self.model, node)
            if not launch.possible(_DDP):
                return  # DeepSpeed's engine and FSDP forward the read; one process wraps nothing
            evidence = launch.shown(_DDP)
            kind = "own-member-prepared" if evidence else "own-member-prepared-launch-unknown"
            if own_class is not None:
                kind = "own-class-member-prepared" if evidence else "own-class-member-prepared-launch-unknown"
        unwrapped = self._unwrapped(node, receiver, wrapping)
        fix = None
        if unwrapped is not None:
            start, end = self.span_of(model_read)
            called = runs_outside_the_wrapper(self.model, node) if isinstance(node, cst.Attribute) else None
            code = self.source.module.code_for_node
            reason = Unsafe.OUTSIDE_THE_WRAPPER.text(call=code(called)) if called is not None else None
            fix = self.fix(Edit(start, end, unwrapped), reason=reason)
        advice = f"{verb} {unwrapped or 'accelerator.unwrap_model(...)'}"
        message = f"{read} through {through(wrapping)}, which does not forward it (AttributeError); {advice}"
        self.report(node, message, fix=fix, evidence=evidence, kind=kind)

    # ---- what is not a finding ----------------------------------------------------------

    def _guarded_by_hasattr(self, read: cst.Attribute) -> bool:
        """``if hasattr(model, "config"): model.config ...`` (and the ``and`` / ternary forms)."""
        receiver = self.source.module.code_for_node(read.value)
        child: cst.CSTNode = read
        for ancestor in self.context.ancestors(read):
            if isinstance(ancestor, cst.FunctionDef):
                return False
            test = None
            if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is ancestor.body:
                test = ancestor.test
            elif isinstance(ancestor, cst.BooleanOperation) and isinstance(ancestor.operator, cst.And):
                test = ancestor.left if child is ancestor.right else None
            if test is not None and self._tests_hasattr(test, receiver, read.attr.value):
                return True
            child = ancestor
        return False

    def _tests_hasattr(self, test: cst.BaseExpression, receiver: str, member: str) -> bool:
        """``test`` calls ``hasattr(receiver, "member")``."""
        code_for = self.source.module.code_for_node
        for call in walk.of_types(test, frozenset({cst.Call})):
            if call_name(call) == "hasattr" and len(call.args) == 2:
                target, name = call.args[0].value, call.args[1].value
                if code_for(target) == receiver and isinstance(name, cst.SimpleString) and name.evaluated_value == member:
                    return True
        return False

    # ---- the fixes ----------------------------------------------------------------------

    def _unwrapped(self, read: cst.BaseExpression, receiver: str, wrapping: Wrapping) -> str | None:
        """The expression that reads the real model at ``read``, or None when nothing in scope can."""
        if wrapping.kind == FSDP:
            return None  # .module holds sharded parameters too: the fix is FSDP.summon_full_params
        if wrapping.has_module:
            # After a wrap in a branch, the model may be bare at the read: .module would fail there.
            return f'getattr({receiver}, "module", {receiver})' if wrapping.conditional else f"{receiver}.module"
        accelerator = accelerator_in_scope(self.model, read)  # bound on every path before the read, or None
        if accelerator is None and wrapping.accelerator and self._bound_here(read, wrapping.accelerator):
            accelerator = wrapping.accelerator
        if accelerator is None and self._bound_here(read, "accelerator"):
            accelerator = "accelerator"
        return f"{accelerator}.unwrap_model({receiver})" if accelerator else None

    def _bound_here(self, read: cst.BaseExpression, name: str) -> bool:
        """``name`` is a parameter of the function holding ``read`` (or ``self.<attr>`` in a method).

        A name assigned in the function may be assigned after the read (UnboundLocalError in the
        fixed code): those count only through accelerator_at, which follows statement order."""
        if name.startswith("self."):
            return self.context.enclosing_class(read) is not None
        function = self.context.enclosing_function(read)
        if function is None:
            return False
        return name in parameter_names(function.params)

    def _cache_fix(self, read: cst.Attribute, receiver: str, wrapping: Wrapping) -> Fix | None:
        """TRL's upstream shape: ``self.model_<attr> = self.model.config.<attr>`` in ``__init__``."""
        if read.attr.value != "config":
            return None
        static = self._static_config_read(read)
        cls = self.context.enclosing_class(read)
        if static is None or cls is None:
            return None
        expression, attribute = static
        init = methods_of(cls).get("__init__")
        if init is None or self.context.enclosing_function(read) is init or _writes_config(self.model.class_facts(cls), attribute):
            return None
        # A base class that wraps ``self.model`` leaves it wrapped after ``super().__init__()``.
        inherited = wrapping.library_base or "self.model" in self.wrapping.inherited.get(id(cls), {})
        anchor = _unwrapped_model_anchor(cls, init, self.model.imports, after_super=not inherited)
        if anchor is None:
            return None
        cached_value = self._replace_receiver(expression, read, "self.model.config")
        existing = _existing_cache(init, cached_value, self.source.module)
        start, end = self.span_of(expression)
        if existing is not None:
            return self.fix(Edit(start, end, existing))
        name = f"self.{attribute if attribute.startswith('model_') else 'model_' + attribute}"
        if name in self.model.class_facts(cls).names_assigned:
            return None
        position = self.get_metadata(PositionProvider, anchor)
        indent = self.source.lines[position.start.line - 1][: position.start.column]
        _, anchor_end = self.span_of(anchor)
        return self.fix(Edit(start, end, name), Edit(anchor_end, anchor_end, f"{indent}{name} = {cached_value}\n"))

    def _static_config_read(self, read: cst.Attribute) -> tuple[cst.BaseExpression, str] | None:
        """``m.config.attr`` or ``getattr(m.config, "attr", default)`` used as a value: (whole read, attr)."""
        parent = self.context.parent(read)
        if isinstance(parent, cst.Attribute) and parent.value is read:
            outer = self.context.parent(parent)
            if isinstance(outer, cst.Call) and outer.func is parent:
                return None  # a method of the config (to_dict, ...): not a static value
            if isinstance(outer, (cst.AssignTarget, cst.AugAssign, cst.Del)) or _is_assigned(parent, outer):
                return None
            return parent, parent.attr.value
        if isinstance(parent, cst.Arg):
            call = self.context.parent(parent)
            if isinstance(call, cst.Call) and call_name(call) == "getattr" and call.args[0] is parent:
                if len(call.args) >= 2 and isinstance(call.args[1].value, cst.SimpleString):
                    attribute = call.args[1].value.evaluated_value
                    if isinstance(attribute, str) and attribute.isidentifier():
                        return call, attribute
        return None

    def _replace_receiver(self, expression: cst.BaseExpression, read: cst.Attribute, replacement: str) -> str:
        code = self.source.module.code_for_node
        if isinstance(expression, cst.Attribute):
            return f"{replacement}.{expression.attr.value}"
        rest = ", ".join(code(arg.value) for arg in expression.args[1:])  # type: ignore[union-attr]
        return f"getattr({replacement}, {rest})"


def _is_the_trainers_model(receiver: str, wrapping: Wrapping) -> bool:
    """The read is on ``self.model`` (or what wraps it): only then is ``self.model.config`` in
    ``__init__`` the same configuration (a teacher or reference model has its own)."""
    return wrapping.kind == STEP_ARGUMENT or receiver in ("self.model", *TRAINER_WRAPPED_ATTRIBUTES)


def _is_assigned(attribute: cst.Attribute, outer: cst.CSTNode | None) -> bool:
    return isinstance(outer, (cst.AnnAssign, cst.AugAssign)) and outer.target is attribute


def _writes_config(facts: ClassFacts, attribute: str) -> bool:
    """Some method sets ``<model>.config.<attribute>``: the value is not static, do not cache it."""
    return any(name.endswith(f".config.{attribute}") for name in facts.names_assigned)


def _unwrapped_model_anchor(
    cls: cst.ClassDef, init: cst.FunctionDef, imports: ImportMap, after_super: bool = True
) -> cst.CSTNode | None:
    """The ``__init__`` statement after which ``self.model`` is the unwrapped model, if any.

    In a Trainer subclass, ``super().__init__(...)``: Trainer stores the model unwrapped and wraps
    it only in ``train()`` (not when ``after_super`` is False: a base of the project wraps it).
    Elsewhere, ``self.model = <not a wrapping call>``.
    """
    if not isinstance(init.body, cst.IndentedBlock):
        return None
    anchor = None
    for statement in init.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and is_super_init(small.value):
                if is_trainer_class(cls) and after_super:
                    anchor = statement
            elif isinstance(small, cst.Assign) and any(
                "self.model" in assigned_names(t.target) for t in small.targets
            ):
                wraps = wrapping_made_by(small.value, imports, set()) is not None
                anchor = None if wraps else statement
    return anchor




def _existing_cache(init: cst.FunctionDef, cached_value: str, module: cst.Module) -> str | None:
    """``self.is_encoder_decoder = model.config.is_encoder_decoder`` already in ``__init__``."""
    if not isinstance(init.body, cst.IndentedBlock):
        return None
    wanted = {cached_value, cached_value.replace("self.model.config", "model.config", 1)}
    for statement in init.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = dotted_name(small.targets[0].target)
                    if target and target.startswith("self.") and module.code_for_node(small.value) in wanted:
                        return target
    return None


def _kind_of(wrapping: Wrapping, evidence: tuple[Evidence, ...]) -> str:
    """Which of the rule's kinds a finding on a read through ``wrapping`` is."""
    if wrapping.kind == STEP_ARGUMENT:
        return "step-model"
    if wrapping.kind == ACCELERATE and wrapping.library_base:
        return "library-prepared" if evidence else "library-prepared-launch-unknown"
    if wrapping.kind == ACCELERATE:
        return "prepared" if evidence else "prepared-launch-unknown"
    return "wrapped-here"
