"""The per-file semantic model: one model per file, facts computed once, typed questions."""

from __future__ import annotations

import textwrap

import libcst as cst

from trllint.semantic.context import DEFAULT_STEP_METHODS
from trllint.semantic.model import SemanticModel
from trllint.core.source import SourceFile

CODE = textwrap.dedent(
    """
    import torch.distributed as dist
    from accelerate import Accelerator


    def train(model, loader, ref_model=None):
        accelerator = Accelerator()
        model = accelerator.prepare(model)
        for batch in loader:
            loss = model(**batch).loss
            total = accelerator.gather(loss).mean()
            width = model.config.hidden_size
            log(loss, total, width)
        if ref_model is not None:
            use(ref_model)
        use(ref_model)
    """
)


def model_of(text: str = CODE) -> SemanticModel:
    return SemanticModel.of(SourceFile(text=text, display_path="train.py"))


def nodes(model: SemanticModel, kind: type, predicate=lambda n: True) -> list:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind) and predicate(node):
                found.append(node)
            return True

    model.source.module.visit(Finder())
    return found


def test_one_model_per_file_and_facts_computed_once():
    source = SourceFile(text=CODE, display_path="train.py")
    model = SemanticModel.of(source)
    assert SemanticModel.of(source) is model
    assert model.imports is model.imports and model.rank_flows is model.rank_flows
    assert model.wrapping(DEFAULT_STEP_METHODS) is model.wrapping(DEFAULT_STEP_METHODS)
    calls = []
    assert model.once(("k", 1), lambda: calls.append(1) or 5) == 5
    assert model.once(("k", 1), lambda: calls.append(1) or 6) == 5
    assert model.once(("k", 2), lambda: 7) == 7 and len(calls) == 1
    assert source.with_text(CODE).model is None  # a fixed text gets a model of its own


def test_is_global():
    model = model_of()
    log_call = nodes(model, cst.Call, lambda c: isinstance(c.func, cst.Name) and c.func.value == "log")[0]
    loss, total = log_call.args[0].value, log_call.args[1].value
    assert model.is_global(total, log_call) and not model.is_global(loss, log_call)


def test_may_be_none():
    model = model_of()
    uses = nodes(model, cst.Call, lambda c: isinstance(c.func, cst.Name) and c.func.value == "use")
    assert not model.may_be_none("ref_model", uses[0]) and model.may_be_none("ref_model", uses[1])


def test_is_wrapped_and_accelerator_at():
    model = model_of()
    config = nodes(model, cst.Attribute, lambda a: a.attr.value == "config")[0]
    wrapping = model.is_wrapped(config, DEFAULT_STEP_METHODS)
    assert wrapping is not None and wrapping.accelerator == "accelerator"
    assert model.accelerator_at(config) == "accelerator"
    first = nodes(model, cst.Assign)[0]  # accelerator = Accelerator(): not bound before itself
    assert model.accelerator_at(first) is None


def test_imports_in_every_arm_of_an_elif_chain():
    model = model_of(
        "import sys\n\nif sys.platform == 'win32':\n    import ntpath as osp\n"
        "elif sys.version_info < (3, 9):\n    import posixpath as old\nelse:\n    from deepspeed import initialize\n"
    )
    assert model.imports.resolve("old") == "posixpath" and model.imports.resolve("initialize") == "deepspeed.initialize"
