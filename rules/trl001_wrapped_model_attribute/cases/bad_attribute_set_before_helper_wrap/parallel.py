"""The DDP wrap the project's training scripts share."""

import os

import torch
from torch.nn.parallel import DistributedDataParallel

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def wrap_ddp(model):
    torch.cuda.set_device(LOCAL_RANK)
    return DistributedDataParallel(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)
