"""Cross-process helpers of the synthesis package (torch.distributed, NCCL)."""
import torch
import torch.distributed as dist


def reduce_dict(input_dict):
    """Average every entry of a dict of scalar tensors over the ranks."""
    world_size = dist.get_world_size()
    if world_size < 2:
        return input_dict
    keys = list(input_dict.keys())
    with torch.no_grad():
        stacked = torch.stack([input_dict[key] for key in keys], dim=0)
        dist.all_reduce(stacked)
        stacked /= world_size
    return dict(zip(keys, stacked))
