"""torch.distributed helpers: an all-reduce that also takes tensors kept on the CPU."""

import torch.distributed as dist


def allreduce(t, async_op=False):
    # NCCL reduces GPU tensors only: a CPU tensor goes through a GPU copy.
    if t.is_cuda:
        ret = dist.all_reduce(t, async_op=async_op)
    else:
        copy = t.cuda()
        ret = dist.all_reduce(copy, async_op=async_op)
        t.copy_(copy.cpu())
    return ret
