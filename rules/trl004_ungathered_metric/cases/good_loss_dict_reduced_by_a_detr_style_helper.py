"""DETR's `reduce_dict`, as many detection and diffusion projects copy it: the loop names each
key `k`, and the dict it returns is built by a comprehension whose own `k` and `v` come from the
all-reduced values, not from that loop. Rank 0 logs the run's averages."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter


def reduce_dict(input_dict, average=True):
    world_size = dist.get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = []
        values = []
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.all_reduce(values)
        if average:
            values /= world_size
        reduced_dict = {k: v for k, v in zip(names, values)}
    return reduced_dict


def train(model, criterion, optimizer, data_loader, epochs):
    dist.init_process_group("nccl")
    model = DistributedDataParallel(model.cuda())
    writer = SummaryWriter() if dist.get_rank() == 0 else None
    step = 0
    for epoch in range(epochs):
        for samples, targets in data_loader:
            loss_dict = criterion(model(samples.cuda()), targets)
            loss = sum(loss_dict.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_dict_reduced = reduce_dict(loss_dict)
            if writer is not None:
                for name, value in loss_dict_reduced.items():
                    writer.add_scalar(f"train/{name}", value.item(), step)
            step += 1
