"""Collect uneven shards by broadcasting from each source in turn. The row counts were
all-gathered first, so every process skips the same empty sources: `rank` is the loop's source,
the same on every process at each turn, not this process's rank."""

import torch
import torch.distributed as dist


def collect_shards(local: torch.Tensor, counts: list[int]) -> list[torch.Tensor]:
    pieces = []
    for rank in range(len(counts)):
        if counts[rank] == 0:
            continue  # that source holds nothing: every process skips it
        if dist.get_rank() == rank:
            buffer = local
        else:
            buffer = torch.empty(counts[rank], local.shape[1], dtype=local.dtype, device=local.device)
        dist.broadcast(buffer, src=rank)
        pieces.append(buffer)
    return pieces
