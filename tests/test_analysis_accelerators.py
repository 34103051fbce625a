"""trllint.facts.accelerators: which receivers are accelerate's Accelerator."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from trllint.facts.accelerators import accelerator_at, is_accelerator
from trllint.semantic.context import NodeContext
from trllint.core.source import SourceFile


def receivers(code: str) -> dict[str, bool]:
    """is_accelerator for the receiver of every ``<receiver>.prepare_model(...)`` call."""
    source = SourceFile(text=textwrap.dedent(code), display_path="case.py")
    wrapper = MetadataWrapper(source.module, unsafe_skip_copy=True)
    parents = wrapper.resolve(ParentNodeProvider)
    context = NodeContext(lambda node: parents.get(node), source)
    answers: dict[str, bool] = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "prepare_model":
                answers[source.module.code_for_node(node.func.value)] = is_accelerator(node.func.value, context)

    wrapper.module.visit(Calls())
    return answers


def test_accelerators_by_name_and_by_binding():
    assert receivers(
        """
        from accelerate import Accelerator as Acc

        shared = Acc()

        class Runner:
            def __init__(self):
                self.acc = Acc(mixed_precision="bf16")
                self.registry = ModelRegistry()

            def run(self, trainer, model):
                self.acc.prepare_model(model)
                self.registry.prepare_model(model)
                trainer.accelerator.prepare_model(model)
                self._accelerator.prepare_model(model)
                alias = trainer.accelerator
                alias.prepare_model(model)
                shared.prepare_model(model)
                Acc().prepare_model(model)
                engine.prepare_model(model)
        """
    ) == {
        "self.acc": True,
        "self.registry": False,
        "trainer.accelerator": True,
        "self._accelerator": True,
        "alias": True,
        "shared": True,
        "Acc()": True,
        "engine": False,
    }


def test_a_plain_name_bound_anywhere_in_the_file_counts_and_other_dotted_names_do_not():
    # A plain name bound to an accelerator anywhere in the file counts everywhere (the file's
    # assignments answer for every scope); a dotted name other than `self.x` is not followed.
    assert receivers(
        """
        from accelerate import Accelerator

        def setup():
            helper_acc = Accelerator()
            state.acc = Accelerator()

        def train(model):
            helper_acc.prepare_model(model)
            state.acc.prepare_model(model)
        """
    ) == {"helper_acc": True, "state.acc": False}


def receivers_in_order(code: str) -> list[bool]:
    """is_accelerator for the receiver of every ``<receiver>.prepare_model(...)`` call, in order,
    asked of the file's semantic model."""
    source = SourceFile(text=textwrap.dedent(code), display_path="case.py")
    from trllint.semantic.model import SemanticModel

    model = SemanticModel.of(source)
    return [
        is_accelerator(call.func.value, model.context)
        for call in model.calls
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "prepare_model"
    ]


def test_self_attribute_is_an_accelerator_only_in_the_class_that_binds_it():
    assert receivers_in_order(
        """
        from accelerate import Accelerator

        class Binds:
            def __init__(self):
                self.acc = Accelerator()

            def run(self, model):
                self.acc.prepare_model(model)

        class Reads:
            def run(self, model):
                self.acc.prepare_model(model)
        """
    ) == [True, False]


def accelerator_at_marks(code: str) -> list[str | None]:
    """accelerator_at for the argument of every ``mark(...)`` call, in source order."""
    source = SourceFile(text=textwrap.dedent(code), display_path="case.py")
    wrapper = MetadataWrapper(source.module, unsafe_skip_copy=True)
    parents = wrapper.resolve(ParentNodeProvider)
    context = NodeContext(lambda node: parents.get(node), source)
    answers: list[str | None] = []

    class Marks(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "mark":
                answers.append(accelerator_at(node.args[0].value, context))

    wrapper.module.visit(Marks())
    return answers


def test_accelerator_at_needs_a_binding_on_every_path_before_the_use():
    assert accelerator_at_marks(
        """
        from accelerate import Accelerator

        def late(x):
            mark(x)
            accelerator = Accelerator()

        def both_arms(x, flag):
            if flag:
                accelerator = Accelerator(mixed_precision="bf16")
            else:
                accelerator = Accelerator()
            mark(x)

        def one_arm(x, flag):
            if flag:
                accelerator = Accelerator()
            mark(x)

        def other_arm_leaves(x, flag):
            if flag:
                acc = Accelerator()
            else:
                raise ValueError("no accelerator")
            mark(x)

        def loop_may_not_run(x, items):
            for item in items:
                accelerator = Accelerator()
            mark(x)

        def try_without_handler_binding(x):
            try:
                accelerator = Accelerator()
            except RuntimeError:
                pass
            mark(x)

        def parameter(x, accelerator):
            mark(x)
        """
    ) == [None, "accelerator", None, "acc", None, None, "accelerator"]


def test_accelerator_at_module_level_and_classes():
    assert accelerator_at_marks(
        """
        from accelerate import Accelerator
        from transformers import Trainer
        from .base import BaseTrainer

        accelerator = Accelerator()

        def uses_global(x):
            mark(x)

        def shadows_global(x):
            mark(x)
            accelerator = None

        class HFTrainer(Trainer):
            def step(self, x):
                mark(x)

        class OwnTrainer(BaseTrainer):
            def step(self, x):
                mark(x)

        class Holder:
            def __init__(self):
                self.acc = Accelerator()

        class Child(Holder):
            def step(self, x):
                mark(x)
        """
    ) == ["accelerator", None, "self.accelerator", "accelerator", "self.acc"]
