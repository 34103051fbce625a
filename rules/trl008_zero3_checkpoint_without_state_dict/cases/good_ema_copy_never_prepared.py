"""Consistency distillation with an EMA copy of the student: only the student goes through
accelerator.prepare; the EMA copy is a diffusers model built from a config and moved to the
device, so no DeepSpeed engine holds it and diffusers never builds under zero.Init. Its
checkpoint is whole under any launch, ZeRO-3 included."""

import os

import torch
from accelerate import Accelerator
from diffusers import DDPMScheduler, StableDiffusionPipeline, UNet2DConditionModel

accelerator = Accelerator(gradient_accumulation_steps=4)


@torch.no_grad()
def ema_update(target_params, source_params, decay):
    for target, source in zip(target_params, source_params):
        target.detach().mul_(decay).add_(source, alpha=1 - decay)


def preview_images(unet, base_model, prompts):
    unet = accelerator.unwrap_model(unet)
    pipeline = StableDiffusionPipeline.from_pretrained(base_model, unet=unet, torch_dtype=torch.float16)
    pipeline = pipeline.to(accelerator.device)
    return [pipeline(prompt, num_inference_steps=4).images[0] for prompt in prompts]


def train(base_model, output_dir, loader, steps, decay=0.95):
    teacher = UNet2DConditionModel.from_pretrained(base_model, subfolder="unet")
    student = UNet2DConditionModel.from_config(teacher.config)
    student.load_state_dict(teacher.state_dict())
    ema_student = UNet2DConditionModel.from_config(student.config)
    ema_student.load_state_dict(student.state_dict())
    ema_student.requires_grad_(False)
    ema_student.to(accelerator.device)
    noise_scheduler = DDPMScheduler.from_pretrained(base_model, subfolder="scheduler")

    optimizer = torch.optim.AdamW(student.parameters(), lr=1e-5)
    student, optimizer, loader = accelerator.prepare(student, optimizer, loader)

    for step, (latents, text_embeddings) in enumerate(loader):
        with accelerator.accumulate(student):
            noise = torch.randn_like(latents)
            timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],))
            noisy = noise_scheduler.add_noise(latents, noise, timesteps)
            with torch.no_grad():
                target = ema_student(noisy, timesteps, text_embeddings).sample
            prediction = student(noisy, timesteps, text_embeddings).sample
            loss = torch.nn.functional.mse_loss(prediction.float(), target.float())
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            ema_update(ema_student.parameters(), student.parameters(), decay)
        if step % 500 == 0 and accelerator.is_main_process:
            preview_images(ema_student, base_model, ["a lighthouse at dusk"])
        if step >= steps:
            break

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        ema_student = accelerator.unwrap_model(ema_student)
        ema_student.save_pretrained(os.path.join(output_dir, "unet_ema"))
    accelerator.end_training()
