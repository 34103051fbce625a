"""Fine-tune a text-to-image UNet; checkpoints with accelerator.save_state every N steps. With automatic
checkpoint naming save_state enters a barrier even under DDP (it prunes old checkpoints)."""

import os

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType, ProjectConfiguration
from diffusers import UNet2DConditionModel

from data import build_dataloader


def main(output_dir="sd-model-finetuned", checkpointing_steps=500):
    accelerator = Accelerator(
        gradient_accumulation_steps=4,
        mixed_precision="fp16",
        project_config=ProjectConfiguration(project_dir=output_dir, automatic_checkpoint_naming=True, total_limit=3),
    )
    unet = UNet2DConditionModel.from_pretrained("stable-diffusion-v1-5/stable-diffusion-v1-5", subfolder="unet")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    loader = build_dataloader()
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)

    global_step = 0
    for batch in loader:
        with accelerator.accumulate(unet):
            loss = unet(batch["noisy_latents"], batch["timesteps"], batch["encoder_hidden_states"]).sample.mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            global_step += 1
            if global_step % checkpointing_steps == 0:
                if accelerator.is_main_process:
                    save_path = os.path.join(output_dir, f"checkpoint-{global_step}")
                    # expect: TRL006
                    accelerator.save_state(save_path)


if __name__ == "__main__":
    main()
