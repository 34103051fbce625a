"""Process-group setup and the model wrap, shared by the training scripts."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def init_distributed():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def build_model(model, local_rank):
    """Synchronised batch norm on the GPU, without the wrap (evaluation scripts use it)."""
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return model.cuda(local_rank)


def wrap_model(model, local_rank):
    model = build_model(model, local_rank)
    model = DistributedDataParallel(model, device_ids=[local_rank], find_unused_parameters=False)
    return model
