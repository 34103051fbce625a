"""A ZeRO-3 run whose save handles the engine first and returns: the plain state dict after
that branch runs on every other backend, never under ZeRO-3. The near miss tests transformers'
is_fsdp_enabled(), false under ZeRO-3 as under plain DDP: its other arm still runs under ZeRO-3."""

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from transformers.integrations import is_deepspeed_zero3_enabled
from transformers.modeling_utils import is_fsdp_enabled

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3))


def save_model(model, output_dir):
    if is_deepspeed_zero3_enabled():
        model.save_checkpoint(output_dir)
        return
    if accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), f"{output_dir}/model.bin")


def save_unless_fsdp(model, output_dir):
    if is_fsdp_enabled():
        accelerator.save_model(model, output_dir)
    elif accelerator.is_main_process:
        # expect: TRL008
        torch.save(accelerator.unwrap_model(model).state_dict(), f"{output_dir}/model.bin")
