"""The near miss of good_ema_copy_sampled_on_main.py: the probe runs the prepared student, whose
parameters ZeRO-3 partitions, on rank 0 alone."""

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from diffusers import UNet2DConditionModel

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_save_16bit_model=True))


@torch.no_grad()
def ema_update(target_params, source_params, decay=0.95):
    for target, source in zip(target_params, source_params):
        target.mul_(decay).add_(source, alpha=1 - decay)


def train(config, loader, probe_latents, probe_timesteps, probe_embeddings):
    student = UNet2DConditionModel.from_config(config)
    ema_student = UNet2DConditionModel.from_config(config)
    ema_student.load_state_dict(student.state_dict())
    ema_student.requires_grad_(False)
    ema_student.to(accelerator.device)

    optimizer = torch.optim.AdamW(student.parameters(), lr=1e-5)
    student, optimizer, loader = accelerator.prepare(student, optimizer, loader)
    for step, (latents, timesteps, embeddings, target) in enumerate(loader):
        loss = (student(latents, timesteps, embeddings).sample - target).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        ema_update(ema_student.parameters(), student.parameters())
        if step % 200 == 0 and accelerator.is_main_process:
            probe = accelerator.unwrap_model(student)
            # expect: TRL007
            prediction = probe(probe_latents, probe_timesteps, probe_embeddings).sample
            print(f"step {step}: student probe norm {prediction.norm().item():.4f}")
