"""Module state dicts saved where nothing runs ZeRO-3: a ZeRO-2 plugin, and a DDP script."""

import torch
import torch.distributed as dist
from accelerate import Accelerator, DeepSpeedPlugin
from torch.nn.parallel import DistributedDataParallel

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=2))


def save_stage_two(model, output_dir):
    # ZeRO-2 keeps every parameter whole on every rank: state_dict() is the model's.
    accelerator.save(accelerator.unwrap_model(model).state_dict(), f"{output_dir}/model.bin")


def save_ddp(module, output_dir):
    model = DistributedDataParallel(module.cuda(), device_ids=[dist.get_rank() % torch.cuda.device_count()])
    if dist.get_rank() == 0:
        model_to_save = model.module if hasattr(model, "module") else model
        torch.save(model_to_save.state_dict(), f"{output_dir}/model.bin")
