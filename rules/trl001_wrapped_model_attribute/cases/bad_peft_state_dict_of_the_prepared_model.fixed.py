"""LoRA fine-tuning of a diffusion transformer: the adapter's weights are saved at each checkpoint."""

import argparse
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler, Transformer2DModel
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
from safetensors.torch import load_file, save_file


def main(args):
    accelerator = Accelerator(gradient_accumulation_steps=args.accumulation)
    transformer = Transformer2DModel.from_pretrained(args.model, subfolder="transformer")
    transformer.requires_grad_(False)
    transformer = get_peft_model(transformer, LoraConfig(r=args.rank, target_modules=["to_q", "to_k", "to_v"]))
    if args.resume:
        # Before the prepare the model is bare: peft finds its config.
        set_peft_model_state_dict(transformer, load_file(os.path.join(args.resume, "adapter.safetensors")))
    optimizer = torch.optim.AdamW([p for p in transformer.parameters() if p.requires_grad], lr=args.lr)
    scheduler = DDPMScheduler.from_pretrained(args.model, subfolder="scheduler")
    loader = torch.utils.data.DataLoader(torch.load(args.latents), batch_size=args.batch_size, shuffle=True)
    transformer, optimizer, loader = accelerator.prepare(transformer, optimizer, loader)

    for step, latents in enumerate(loader):
        with accelerator.accumulate(transformer):
            noise = torch.randn_like(latents)
            timesteps = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            noisy = scheduler.add_noise(latents, noise, timesteps)
            loss = F.mse_loss(transformer(noisy, timestep=timesteps).sample, noise)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.is_main_process and step % args.save_every == 0:
            # expect: TRL001
            save_file(get_peft_model_state_dict(accelerator.unwrap_model(transformer)), f"adapter-{step}.safetensors")
    if args.restore_best:
        # expect: TRL001
        set_peft_model_state_dict(model=accelerator.unwrap_model(transformer), peft_model_state_dict=load_file(args.restore_best))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="PixArt-alpha/PixArt-XL-2-512x512")
    parser.add_argument("--latents", default="latents.pt")
    parser.add_argument("--resume")
    parser.add_argument("--restore-best")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--accumulation", type=int, default=1)
    parser.add_argument("--save-every", type=int, default=500)
    main(parser.parse_args())
