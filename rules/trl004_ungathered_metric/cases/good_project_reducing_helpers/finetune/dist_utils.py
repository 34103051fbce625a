"""Cross-process reductions for the training scripts (torch.distributed, NCCL)."""
import torch
import torch.distributed as dist


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def get_all_reduce_mean(tensor):
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    tensor = tensor / dist.get_world_size()
    return tensor


def reduce_value(value, average=True):
    world_size = get_world_size()
    if world_size < 2:  # single process: the value is already the run's
        return value
    with torch.no_grad():
        dist.all_reduce(value)
        if average:
            value /= world_size
    return value
