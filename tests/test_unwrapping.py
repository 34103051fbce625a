"""trllint.facts.unwrapping: the model behind accelerator.unwrap_model, and the contexts that
gather its shards (asked by TRL007 and TRL008)."""

from __future__ import annotations

import textwrap

import libcst as cst

from trllint.core.source import SourceFile
from trllint.facts.calls import calls_in
from trllint.facts.unwrapping import params_gathered_at, unwrap_call_of
from trllint.semantic.model import SemanticModel


def _calls_named(code: str, method: str) -> tuple[SemanticModel, list[cst.Call]]:
    model = SemanticModel.of(SourceFile(text=textwrap.dedent(code), display_path="case.py"))
    calls = [c for c in calls_in(model) if isinstance(c.func, cst.Attribute) and c.func.attr.value == method]
    return model, calls


def unwrapped_receivers(code: str) -> dict[str, bool]:
    """For each ``<receiver>.save_pretrained(...)``: is the receiver ``accelerator.unwrap_model(...)``?"""
    model, calls = _calls_named(code, "save_pretrained")
    return {
        model.source.module.code_for_node(call.func.value): unwrap_call_of(model, call.func.value, call) is not None  # type: ignore[attr-defined]
        for call in calls
    }


def test_unwrapped_directly_or_through_every_assignment_of_a_name():
    assert unwrapped_receivers(
        """
        from accelerate import Accelerator

        accelerator = Accelerator()

        def direct(model):
            accelerator.unwrap_model(model).save_pretrained("out")

        def bound(model):
            unwrapped = accelerator.unwrap_model(model)
            unwrapped.save_pretrained("out")

        def bound_twice_alike(model):
            unwrapped = accelerator.unwrap_model(model)
            unwrapped = accelerator.unwrap_model(model)
            unwrapped.save_pretrained("out")

        def rebound_to_another_model(model, path):
            ref = accelerator.unwrap_model(model)
            ref = AutoModel.from_pretrained(path)
            ref.save_pretrained("out")

        def unpacked(pair):
            policy, value = pair
            policy.save_pretrained("out")

        def loop(models):
            for each in models:
                each.save_pretrained("out")

        def not_an_accelerator(model, helper):
            helper.unwrap_model(model).save_pretrained("out")
        """
    ) == {
        'accelerator.unwrap_model(model)': True,
        "unwrapped": True,
        "ref": False,
        "policy": False,
        "each": False,
        "helper.unwrap_model(model)": False,
    }


def test_a_name_is_followed_only_in_a_file_that_unwraps_somewhere():
    # The unwrap call sits in a helper the saving function never reaches: the name is still
    # followed (the file spells an unwrap call), and reads as what its own scope binds.
    assert unwrapped_receivers(
        """
        from accelerate import Accelerator

        accelerator = Accelerator()

        def helper(model):
            return accelerator.unwrap_model(model)

        def save(model):
            unwrapped = accelerator.unwrap_model(model)
            unwrapped.save_pretrained("out")
        """
    ) == {"unwrapped": True}
    # Without any unwrap call in the file, no name holds one.
    assert unwrapped_receivers(
        """
        def save(model, accelerator):
            unwrapped = accelerator.get_state_dict(model)
            unwrapped.save_pretrained("out")
        """
    ) == {"unwrapped": False}


def test_parameters_gathered_inside_a_gathering_context_of_the_same_function():
    model, calls = _calls_named(
        """
        import deepspeed
        from trl.models import unwrap_model_for_generation

        def gathered(engine):
            with deepspeed.zero.GatheredParameters(list(engine.module.parameters()), modifier_rank=0):
                engine.module.generate(x)

        def unwrapped_for_generation(model, accelerator):
            with unwrap_model_for_generation(model, accelerator) as unwrapped:
                unwrapped.generate(x)

        def other_context(engine):
            with torch.no_grad():
                engine.module.generate(x)

        def defined_inside():
            with deepspeed.zero.GatheredParameters(params):
                def later(engine):
                    engine.module.generate(x)
        """,
        "generate",
    )
    assert [params_gathered_at(model, call) for call in calls] == [True, True, False, False]


def test_a_function_that_spells_no_unwrap_call_is_not_followed(flows_built):
    # A name is bound to an unwrap call only by its own scope's assignments (the flows read no
    # other scope's), so a function that holds none is answered without building its flow.
    assert unwrapped_receivers(
        """
        from accelerate import Accelerator

        accelerator = Accelerator()
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained("at-the-top")

        def save(loaded):
            loaded.save_pretrained("out")

        def save_bound(model):
            mine = accelerator.unwrap_model(model)
            mine.save_pretrained("out")
        """
    ) == {"unwrapped": True, "loaded": False, "mine": True}
    assert sorted(flows_built) == ["<module>", "save_bound"]
