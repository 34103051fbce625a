"""trllint.facts.partitioning: which backends may shard the module a name holds, followed from its
construction to everything the file hands it to (asked by TRL008)."""

from __future__ import annotations

import textwrap

import libcst as cst

from trllint.core.source import SourceFile
from trllint.facts.calls import calls_in
from trllint.facts.launch.backends import SHARDED, Backend
from trllint.facts.partitioning import backends_sharding
from trllint.semantic.model import SemanticModel

FSDP = frozenset({Backend.FSDP})
NONE: frozenset[Backend] = frozenset()

HEADER = """
from accelerate import Accelerator
from diffusers import StableDiffusionPipeline, UNet2DConditionModel
from transformers import CLIPTextModel

accelerator = Accelerator()
"""


def sharding_of_unwrapped(code: str) -> list[frozenset[Backend]]:
    """For each ``accelerator.unwrap_model(<name>)`` directly followed by ``.save_pretrained``:
    the backends that may shard that name's module."""
    model = SemanticModel.of(SourceFile(text=textwrap.dedent(HEADER) + textwrap.dedent(code), display_path="case.py"))
    answers = []
    for call in calls_in(model):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "save_pretrained" and isinstance(func.value, cst.Call):
            unwrap = func.value
            answers.append(backends_sharding(model, unwrap.args[0].value, unwrap))
    return answers


def test_a_diffusers_model_never_prepared_is_sharded_by_nothing():
    assert sharding_of_unwrapped(
        """
        def main(config, device):
            ema = UNet2DConditionModel.from_config(config)
            ema.requires_grad_(False)
            ema = ema.to(device)
            ema.train()
            with accelerator.accumulate(ema):
                out = ema(1, 2)
            if accelerator.unwrap_model(ema).dtype != "float32":
                print(ema.config)
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    ) == [NONE]


def test_prepare_model_alone_builds_no_deepspeed_engine_but_wraps_fsdp():
    assert sharding_of_unwrapped(
        """
        def main(config):
            student = UNet2DConditionModel.from_config(config)
            student = accelerator.prepare_model(student)
            student = accelerator.unwrap_model(student)
            accelerator.unwrap_model(student).save_pretrained("out")
        """
    ) == [FSDP]


def test_followed_into_the_files_functions_and_diffusers_calls():
    assert sharding_of_unwrapped(
        """
        def sample(unet, path):
            unet = accelerator.unwrap_model(unet)
            pipeline = StableDiffusionPipeline.from_pretrained(path, unet=unet)
            return pipeline("a prompt")

        def freeze(model):
            for param in model.parameters():
                param.requires_grad = False

        def main(config):
            ema = UNet2DConditionModel.from_config(config)
            freeze(model=ema)
            sample(ema, "path")
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    ) == [NONE]


def test_handed_to_prepare_directly_or_through_a_function_of_the_file():
    assert sharding_of_unwrapped(
        """
        def wrap(module):
            return accelerator.prepare(module)

        def prepared(config):
            ema = UNet2DConditionModel.from_config(config)
            engine = accelerator.prepare(ema)
            accelerator.unwrap_model(ema).save_pretrained("out")

        def through_a_function(config):
            ema = UNet2DConditionModel.from_config(config)
            engine = wrap(ema)
            accelerator.unwrap_model(ema).save_pretrained("out")

        def moved_then_prepared(config, device):
            ema = UNet2DConditionModel.from_config(config)
            engine = accelerator.prepare(ema.to(device))
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    ) == [SHARDED, SHARDED, SHARDED]


def test_unknown_where_the_module_may_come_from_or_go_elsewhere():
    assert sharding_of_unwrapped(
        """
        def transformers_model(path):
            encoder = CLIPTextModel.from_pretrained(path)  # zero.Init may build it partitioned
            accelerator.unwrap_model(encoder).save_pretrained("out")

        def unpacked(config, optimizer):
            unet = UNet2DConditionModel.from_config(config)
            unet, optimizer = accelerator.prepare(unet, optimizer)
            accelerator.unwrap_model(unet).save_pretrained("out")

        def a_parameter(unet):
            accelerator.unwrap_model(unet).save_pretrained("out")

        def aliased(config):
            unet = UNet2DConditionModel.from_config(config)
            models = [unet]
            accelerator.unwrap_model(unet).save_pretrained("out")

        def handed_to_an_unknown_call(config, trainer_class):
            unet = UNet2DConditionModel.from_config(config)
            trainer_class(model=unet).train()
            accelerator.unwrap_model(unet).save_pretrained("out")

        def a_part_prepared(config):
            unet = UNet2DConditionModel.from_config(config)
            print(type(unet), len(unet.down_blocks))
            engine = accelerator.prepare(getattr(unet, "mid_block"))
            accelerator.unwrap_model(unet).save_pretrained("out")

        def a_submodule_prepared(config):
            unet = UNet2DConditionModel.from_config(config)
            engine = accelerator.prepare(unet.get_submodule("mid_block"))
            accelerator.unwrap_model(unet).save_pretrained("out")
        """
    ) == [SHARDED] * 7


def test_a_file_that_enters_zero_init_itself_is_unknown():
    assert sharding_of_unwrapped(
        """
        import deepspeed

        def main(config):
            with deepspeed.zero.Init():
                ema = UNet2DConditionModel.from_config(config)
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    ) == [SHARDED]


def test_a_closure_reads_the_variable_of_its_enclosing_function():
    assert sharding_of_unwrapped(
        """
        def main(config):
            ema = UNet2DConditionModel.from_config(config)

            def save_hook(models, weights, output_dir):
                ema.save_pretrained(output_dir)
                accelerator.unwrap_model(ema).save_pretrained(output_dir)

            def prepare_hook(unused):
                return accelerator.prepare(ema)

            accelerator.register_save_state_pre_hook(save_hook)
        """
    ) == [SHARDED]


def test_zero_init_disabled_around_construction_is_no_zero_init():
    disabled = """
        from accelerate.state import AcceleratorState

        def main(config):
            plugin = AcceleratorState().deepspeed_plugin
            with plugin.zero3_init_context_manager(enable=False):
                ema = UNet2DConditionModel.from_config(config)
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    assert sharding_of_unwrapped(disabled) == [NONE]
    assert sharding_of_unwrapped(disabled.replace("enable=False", "enable=True")) == [SHARDED]


def test_a_name_the_unwrapped_module_is_given_is_followed_too():
    assert sharding_of_unwrapped(
        """
        def saved_through_another_name(config):
            ema = UNet2DConditionModel.from_config(config)
            unwrapped = accelerator.unwrap_model(ema)
            unwrapped.save_pretrained("unused")
            accelerator.unwrap_model(ema).save_pretrained("out")

        def prepared_through_another_name(config):
            ema = UNet2DConditionModel.from_config(config)
            unwrapped = accelerator.unwrap_model(ema)
            engine = accelerator.prepare(unwrapped)
            accelerator.unwrap_model(ema).save_pretrained("out")

        def prepared_unwrapped(config):
            ema = UNet2DConditionModel.from_config(config)
            engine = accelerator.prepare(accelerator.unwrap_model(ema))
            accelerator.unwrap_model(ema).save_pretrained("out")
        """
    ) == [NONE, SHARDED, SHARDED]
