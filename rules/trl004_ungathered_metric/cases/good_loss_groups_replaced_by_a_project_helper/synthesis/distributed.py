"""Cross-process helpers of the synthesis package (torch.distributed, NCCL)."""
import torch.distributed as dist


def reduce_dict(input_dict):
    """Average every entry of a dict of scalar tensors over the ranks, in place."""
    world_size = dist.get_world_size()
    for name in sorted(input_dict):
        dist.all_reduce(input_dict[name])
        input_dict[name] /= world_size
    return input_dict
