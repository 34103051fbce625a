"""A ZeRO-1 style optimizer: each rank steps the parameters it owns, then every rank broadcasts
each owner's parameters to the others. The table of owners is keyed by rank, built by a
comprehension over every rank (the same table on each), and the loop skips a parameter by its
own attribute: every rank skips the same parameters and enters the same broadcasts."""

import torch
import torch.distributed as dist


def shard_by_owner(params, world_size):
    owned = {rank: [] for rank in range(world_size)}
    for index, param in enumerate(params):
        owned[index % world_size].append(param)
    return owned


def broadcast_owned(owned, include_offloaded=False):
    handles = []
    with torch.no_grad():
        for owner, params in owned.items():
            for param in params:
                if getattr(param, "offloaded_to_cpu", False) and not include_offloaded:
                    continue
                handles.append(dist.broadcast(param.data, src=owner, async_op=True))
    for handle in handles:
        handle.wait()


def train(model, loader, world_size):
    rank = dist.get_rank()
    groups = shard_by_owner(list(model.parameters()), world_size)
    optimizer = torch.optim.AdamW(groups[rank], lr=1e-4)
    for inputs, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        for param in model.parameters():
            if param.grad is not None:
                dist.all_reduce(param.grad, op=dist.ReduceOp.AVG)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        broadcast_owned(groups)
