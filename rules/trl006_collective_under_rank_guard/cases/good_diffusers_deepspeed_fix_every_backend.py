"""The diffusers examples' fix, widened to FSDP: every rank enters save_state under a sharding backend."""

import os

from accelerate import Accelerator
from accelerate.utils import DistributedType

accelerator = Accelerator()


def checkpoint(output_dir, global_step):
    if (
        accelerator.is_main_process
        or accelerator.distributed_type == DistributedType.DEEPSPEED
        or accelerator.distributed_type == DistributedType.FSDP
    ):
        accelerator.save_state(os.path.join(output_dir, f"checkpoint-{global_step}"))
