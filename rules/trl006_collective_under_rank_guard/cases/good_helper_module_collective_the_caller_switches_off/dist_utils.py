"""torch.distributed helpers that also work in a single process."""

import torch.distributed as dist


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def global_rank():
    return dist.get_rank() if is_distributed() else 0


def barrier():
    if is_distributed():
        dist.barrier()
