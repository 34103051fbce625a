"""The near miss of good_loss_dict_reduced_by_a_detr_style_helper.py: the helper all-reduces a
stacked copy, but its comprehension rebuilds the dict from the input's own values, this rank's,
so rank 0 logs its own losses as the run's."""

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
        reduced_dict = {k: v for k, v in input_dict.items()}
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
                    # expect: TRL004
                    writer.add_scalar(f"train/{name}", value.item(), step)
            step += 1
