"""A trainer that runs under DeepSpeed ZeRO-3 or plain DDP, as its own engine switch says
(CosyVoice's `train_engine`): the whole-model save sits in the DDP arm, where the module's
parameters are whole; the DeepSpeed arm saves through the engine."""

import torch
from accelerate import Accelerator, DeepSpeedPlugin

deepspeed_plugin = DeepSpeedPlugin(zero_stage=3, gradient_accumulation_steps=2)
accelerator = Accelerator(mixed_precision="bf16", deepspeed_plugin=deepspeed_plugin)


def save_model(model, save_path, info_dict):
    if info_dict["train_engine"] == "torch_ddp":
        if accelerator.is_main_process:
            torch.save(model.module.state_dict(), save_path)
    else:
        model.save_checkpoint(save_dir=info_dict["model_dir"], tag="epoch")


def save_on_main(model, save_path, train_engine):
    # The near miss: the same save where the switch says DeepSpeed, ZeRO-3's placeholders.
    if train_engine == "deepspeed" and accelerator.is_main_process:
        # expect: TRL008
        torch.save(model.module.state_dict(), save_path)
