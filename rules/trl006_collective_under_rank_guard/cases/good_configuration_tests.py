"""Tests of the configuration and of the world's size: every rank reads the same arguments and
the same process count, so each collective below is entered by all ranks or by none."""

import torch.distributed as dist
from accelerate import Accelerator


def finish(args, model, accelerator: Accelerator):
    world_size = dist.get_world_size() if dist.is_initialized() else 1
    if world_size > 1:
        dist.barrier()
    if accelerator.num_processes > 1:
        accelerator.wait_for_everyone()
    if args.with_tracking and args.report_to == "wandb":
        accelerator.wait_for_everyone()
    if args.output_dir is not None:
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            accelerator.unwrap_model(model).save_pretrained(args.output_dir, save_function=accelerator.save)
