"""The near misses of the EMA and prepare_model cases: a module that goes through
accelerator.prepare (directly, or moved to the device on the way), and a transformers model that
is never prepared but that from_pretrained builds under zero.Init when accelerate's
zero3_init_flag is on. Under ZeRO-3 each one's parameters are placeholders."""

import os

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from diffusers import UNet2DConditionModel
from transformers import CLIPTextModel

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_init_flag=True))


def train(base_model, output_dir, loader):
    student = UNet2DConditionModel.from_pretrained(base_model, subfolder="unet")
    ema_student = UNet2DConditionModel.from_config(student.config)
    text_encoder = CLIPTextModel.from_pretrained(base_model, subfolder="text_encoder")
    text_encoder.requires_grad_(False)

    optimizer = torch.optim.AdamW(student.parameters(), lr=1e-5)
    student, optimizer, loader = accelerator.prepare(student, optimizer, loader)
    ema_engine = accelerator.prepare(ema_student.to(accelerator.device))

    for latents, timesteps, input_ids in loader:
        with torch.no_grad():
            embeddings = text_encoder(input_ids)[0]
            target = ema_engine(latents, timesteps, embeddings).sample
        loss = (student(latents, timesteps, embeddings).sample - target).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        # expect: TRL008
        accelerator.unwrap_model(student).save_pretrained(os.path.join(output_dir, "unet"))
        # expect: TRL008
        accelerator.unwrap_model(ema_student).save_pretrained(os.path.join(output_dir, "unet_ema"))
        # expect: TRL008
        accelerator.unwrap_model(text_encoder).save_pretrained(os.path.join(output_dir, "text_encoder"))
