"""trllint.analysis.accelerators: which receivers are accelerate's Accelerator."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from trllint.analysis.accelerators import is_accelerator
from trllint.analysis.context import NodeContext
from trllint.source import SourceFile


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
