"""A training script that builds its DeepSpeed launch itself and lets every rank into save_state
under DeepSpeed (where save_state is a collective); under any other launch only the main process
saves. Nothing shows an FSDP launch of it: unknown is agreed."""

import os

import torch
from accelerate import Accelerator, DistributedType
from accelerate.utils import DeepSpeedPlugin

deepspeed_plugin = DeepSpeedPlugin(zero_stage=2, gradient_accumulation_steps=4)
accelerator = Accelerator(mixed_precision="bf16", deepspeed_plugin=deepspeed_plugin)


def train(args, transformer, optimizer, train_dataloader):
    transformer, optimizer, train_dataloader = accelerator.prepare(transformer, optimizer, train_dataloader)
    global_step = 0
    for batch in train_dataloader:
        with accelerator.accumulate(transformer):
            loss = torch.nn.functional.mse_loss(transformer(batch["latents"]), batch["target"])
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            global_step += 1
            if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
                if global_step % args.checkpointing_steps == 0:
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    accelerator.save_state(save_path)
