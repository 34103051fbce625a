"""The near miss of good_owner_groups_skip_by_parameter.py: the loop walks this rank's own
parameters (the table indexed by this process's rank), so each rank skips different ones and
enters a different number of broadcasts."""

import torch
import torch.distributed as dist


def shard_by_owner(params, world_size):
    owned = {rank: [] for rank in range(world_size)}
    for index, param in enumerate(params):
        owned[index % world_size].append(param)
    return owned


def broadcast_mine(owned):
    rank = dist.get_rank()
    with torch.no_grad():
        for param in owned[rank]:
            if param.grad is None:
                continue
            # expect: TRL006
            dist.broadcast(param.data, src=rank)
