"""Cross-process helpers: each reduces its argument in place, as the training loop expects."""
import torch.distributed as dist


def all_reduce_mean(tensor):
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        tensor /= dist.get_world_size()


def sync_max(tensor):
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
