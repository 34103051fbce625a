"""The process group and the DDP wrap of ``scenario_wrapped_elsewhere.py``, in a module of their
own, as training projects keep them (``dist_utils.py``)."""

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def init_distributed():
    dist.init_process_group("gloo")
    return dist.get_rank()


def wrap_model(model):
    return DistributedDataParallel(model)
