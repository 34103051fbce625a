"""The near miss of good_loop_over_every_source_rank.py: the skip tests this process's own row
count, so a process with no rows leaves every turn while the others broadcast to it: they hang."""

import torch
import torch.distributed as dist


def collect_shards(local: torch.Tensor, counts: list[int]) -> list[torch.Tensor]:
    pieces = []
    for rank in range(len(counts)):
        if counts[dist.get_rank()] == 0:
            continue  # this process holds nothing
        if dist.get_rank() == rank:
            buffer = local
        else:
            buffer = torch.empty(counts[rank], local.shape[1], dtype=local.dtype, device=local.device)
        # expect: TRL006
        dist.broadcast(buffer, src=rank)
        pieces.append(buffer)
    return pieces
