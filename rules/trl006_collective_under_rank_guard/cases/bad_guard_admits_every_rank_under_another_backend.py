"""The near miss of good_guard_admits_every_rank_under_the_backend_it_builds.py: the guard lets
every rank in under FSDP, but the script builds a DeepSpeed launch, under which save_state is a
collective too and only the main process enters it."""

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
            if accelerator.distributed_type == DistributedType.FSDP or accelerator.is_main_process:
                if global_step % args.checkpointing_steps == 0:
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    # expect: TRL006
                    accelerator.save_state(save_path)
