"""Layer-wise sampled fine-tuning of a diffusion transformer: one optimizer per parameter,
stepped from gradient hooks, so the model is wrapped with accelerator.prepare_model alone.
accelerate builds a DeepSpeed engine only in prepare(); prepare_model places the model and
wraps nothing under DeepSpeed, so ZeRO-3 never partitions it and its checkpoint is whole."""

import random

import torch
from accelerate import Accelerator
from diffusers import DiTTransformer2DModel

accelerator = Accelerator()


def freeze_all(model):
    for param in model.parameters():
        param.requires_grad = False


def sample_layers(model, fraction):
    for name, param in model.named_parameters():
        if name.startswith("transformer_blocks.") and random.random() < fraction:
            param.requires_grad = True


def resample(model, fraction=0.25):
    freeze_all(model)
    sample_layers(model, fraction)


def main(pretrained, output_dir, loader, steps, fraction=0.25):
    model = DiTTransformer2DModel.from_pretrained(pretrained, subfolder="transformer")
    resample(model=model, fraction=fraction)

    optimizers = {}
    for param in model.parameters():
        optimizers[param] = accelerator.prepare_optimizer(torch.optim.AdamW([param], lr=1e-4))

    def step_param(param):
        if param.grad is not None:
            optimizers[param].step()
            optimizers[param].zero_grad(set_to_none=True)

    for param in model.parameters():
        param.register_post_accumulate_grad_hook(step_param)

    model = accelerator.prepare_model(model)
    loader = accelerator.prepare_data_loader(loader)
    for step, (latents, timesteps, labels) in enumerate(loader):
        if step % 100 == 0:
            resample(model, fraction)
        loss = model(latents, timestep=timesteps, class_labels=labels).sample.pow(2).mean()
        accelerator.backward(loss)
        if step >= steps:
            break

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        model = accelerator.unwrap_model(model)
        model.save_pretrained(output_dir)
