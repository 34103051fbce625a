"""What the binding pass keeps: per file, the wrapping of each model-member read
(``WrappingFacts``, what the rule asks); per function, what each name holds (``Scope``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from trllint.facts.wrapping import ACCELERATE, Wrapping


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
    # id(read) -> (the Attribute node, its wrapping): reads of any other member of a model that
    # DataParallel, DDP or accelerate's prepare may wrap (what the wrapper lacks is the rule's call).
    other_reads: dict[int, tuple[cst.Attribute, Wrapping]] = field(default_factory=dict)
    # id(call) -> (the call, the model handed to it, the member the library function reads on it,
    # the model's wrapping): `get_peft_model_state_dict(model)` reads `model.peft_config`.
    handed_reads: dict[int, tuple[cst.Call, cst.BaseExpression, str, Wrapping]] = field(default_factory=dict)
    # method name -> (the argument's position, or its keyword; the wrapping it holds), for each
    # call of a method the file does not define handed a possibly wrapped model
    # (`self.model.set_prepared_model(results[0])`): a class of another module may keep it.
    handed_to_methods: dict[str, list[tuple[int | str, Wrapping]]] = field(default_factory=dict)

    def at(self, read: cst.Attribute) -> Wrapping | None:
        found = self.reads.get(id(read))
        return None if found is None else found[1]

    def wrapped_reads(self) -> list[tuple[cst.Attribute, Wrapping]]:
        """Every read of a member of a possibly wrapped model, with its wrapping."""
        return list(self.reads.values())


def tuple_of(value: cst.BaseExpression | None, made: list[Wrapping | None] | None) -> list[Wrapping | None] | None:
    """What each element holds, when ``value`` returns a tuple of wrapped objects: the unpacked
    elements of ``deepspeed.initialize(...)``, or ``accelerator.prepare(a, b, ...)`` of several."""
    if made is None or not isinstance(value, cst.Call):
        return None
    if len(made) > 1:
        return made
    arguments = [a for a in value.args if a.keyword is None]
    if made[0] is not None and made[0].kind == ACCELERATE and len(arguments) > 1 and not any(a.star for a in arguments):
        return made * len(arguments)
    return None


def loop_element(held: list[Wrapping | None] | None) -> Wrapping | None:
    """What a loop over a list of models holds: a wrapped element's wrapping, ``conditional``
    unless every element is wrapped."""
    wrapped = [w for w in held or () if w is not None]
    if held is None or not wrapped:
        return None
    return wrapped[0] if len(wrapped) == len(held) else replace(wrapped[0], conditional=True)


@dataclass
class IfBindings:
    before: dict[str, Wrapping]
    rebound: dict[str, Wrapping] = field(default_factory=dict)


@dataclass
class Scope:
    function: cst.FunctionDef | None
    cls: cst.ClassDef | None  # the class this function is a method of
    bindings: dict[str, Wrapping | None] = field(default_factory=dict)
    accelerators: set[str] = field(default_factory=set)
    branch_depth: int = 0  # how many if/for/while/try blocks hold the current statement
    # For each `if` that holds the current statement, innermost last: what held a wrapper when
    # the `if` began, and which of those its blocks bound to something else since (after a
    # rank test, the other ranks still hold the wrapper).
    ifs: list[IfBindings] = field(default_factory=list)
    # Names bound to an instance of a plain nn.Module class of this file: that class's name.
    plain: dict[str, str] = field(default_factory=dict)
    # Names bound to the whole tuple a call of several wraps returned (`results = accelerator.prepare(
    # model, optimizer)`): what each element holds, read by `results[0]`.
    tuples: dict[str, list[Wrapping | None]] = field(default_factory=dict)
    # The functions defined in this function's body, by name (module-level ones: BindingPass.functions).
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
