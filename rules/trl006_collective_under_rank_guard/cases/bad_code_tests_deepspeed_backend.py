"""The script handles DeepSpeed itself, so DeepSpeed is a launch it supports: save_state on the
main process alone then waits for ranks that never come (the diffusers examples' hang)."""

import os

from accelerate import Accelerator
from accelerate.utils import DistributedType

accelerator = Accelerator(gradient_accumulation_steps=4)


def configure(args):
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        # DeepSpeed takes the micro-batch size from its own config
        accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = args.batch_size


def checkpoint(output_dir, global_step):
    if accelerator.is_main_process:
        save_path = os.path.join(output_dir, f"checkpoint-{global_step}")
        # expect: TRL006
        accelerator.save_state(save_path)
