"""An unconditional DDPM trained with an EMA of its weights that only the main process keeps and
saves, by design. Every launch of the project is DDP (configs/multi_gpu.yaml), where
get_state_dict and save_state gather nothing: no other rank waits."""

import copy
import os

import torch
from accelerate import Accelerator


def train(args, model, noise_scheduler, optimizer, train_dataloader):
    accelerator = Accelerator(mixed_precision="fp16", log_with="tensorboard", project_dir=args.output_dir)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    ema_model = copy.deepcopy(accelerator.unwrap_model(model)) if accelerator.is_main_process else None
    global_step = 0
    for epoch in range(args.num_epochs):
        for batch in train_dataloader:
            clean = batch["input"]
            noise = torch.randn_like(clean)
            steps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (clean.shape[0],), device=clean.device)
            noisy = noise_scheduler.add_noise(clean, noise, steps)
            loss = torch.nn.functional.mse_loss(model(noisy, steps).sample, noise)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            global_step += 1
            if accelerator.is_main_process:
                with torch.no_grad():
                    for ema_param, param in zip(ema_model.parameters(), accelerator.unwrap_model(model).parameters()):
                        ema_param.mul_(0.999).add_(param.detach(), alpha=0.001)
                if global_step % args.save_steps == 0:
                    accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
                    state = accelerator.get_state_dict(model)
                    torch.save({"model": state, "ema": ema_model.state_dict()}, os.path.join(args.output_dir, "weights.pt"))
