"""The near misses of bad_ddp_forward_in_rank_zero_validation.py: the master process validates
the bare model (``model.module``), or a DDP wrapper built with ``broadcast_buffers=False``, whose
forward runs no collective; or every rank validates its own shard through the wrapper."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def validate_bare_model(model, val_loader, device):
    model = DistributedDataParallel(model.to(device), device_ids=[dist.get_rank()])
    if dist.get_rank() == 0:
        with torch.no_grad():
            for batch in val_loader:
                _, loss = model.module(batch["input_ids"].to(device), targets=batch["labels"].to(device))
                print(loss.item())


def validate_without_buffer_broadcast(net, val_loader, device):
    net = DistributedDataParallel(net.to(device), device_ids=[dist.get_rank()], broadcast_buffers=False)
    if dist.get_rank() == 0:
        with torch.no_grad():
            for batch in val_loader:
                _, loss = net(batch["input_ids"].to(device), targets=batch["labels"].to(device))
                print(loss.item())


def validate_on_every_rank(ddp_model, val_loader, device):
    ddp_model = DistributedDataParallel(ddp_model.to(device), device_ids=[dist.get_rank()])
    total = torch.zeros(1, device=device)
    with torch.no_grad():
        for batch in val_loader:
            _, loss = ddp_model(batch["input_ids"].to(device), targets=batch["labels"].to(device))
            total += loss
    dist.all_reduce(total)
    if dist.get_rank() == 0:
        print(total.item() / dist.get_world_size())
