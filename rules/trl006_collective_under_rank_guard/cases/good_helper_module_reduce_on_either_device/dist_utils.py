"""torch.distributed helpers: an all-reduce the caller may turn off for a one-process run."""

import torch.distributed as dist


def allreduce(t, distributed, async_op=False):
    # One process: nothing to reduce.
    if distributed:
        return dist.all_reduce(t, async_op=async_op)
    return None
