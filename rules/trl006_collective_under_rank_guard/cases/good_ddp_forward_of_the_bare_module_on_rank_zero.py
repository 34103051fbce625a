"""Rank 0 evaluates the bare module, or a DDP that broadcasts no buffers; every rank runs the
wrapped forward in training; another function's model of the same name is no DDP."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision
from apex.parallel import DistributedDataParallel as ApexDDP
from torch.nn.parallel import DistributedDataParallel


def sample_grid(model, device):
    """A plain model handed in by the caller: its forward is no collective."""
    model = torchvision.models.resnet18(num_classes=10).to(device)
    if dist.get_rank() == 0:
        return model(torch.randn(4, 3, 224, 224, device=device))
    return None


def preview_after_unwrapping(net, local_rank):
    """The name is rebound to the bare module before rank 0's forward."""
    model = DistributedDataParallel(net, device_ids=[local_rank])
    model(torch.randn(2, 3, 224, 224, device=local_rank)).sum().backward()
    model = model.module
    if dist.get_rank() == 0:
        with torch.no_grad():
            print(model(torch.randn(2, 3, 224, 224, device=local_rank)).mean().item())


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    net = torchvision.models.resnet18(num_classes=10).to(local_rank)
    model = DistributedDataParallel(net, device_ids=[local_rank])
    quiet = DistributedDataParallel(torchvision.models.resnet18().to(local_rank), device_ids=[local_rank], broadcast_buffers=False)
    # apex's DDP syncs no buffers in its forward
    apex_model = ApexDDP(torchvision.models.resnet18().to(local_rank))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        images = torch.randn(32, 3, 224, 224, device=local_rank)
        labels = torch.randint(0, 10, (32,), device=local_rank)
        loss = F.cross_entropy(model(images), labels) + quiet(images).mean() * 0
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % 10 == 0:
            with torch.no_grad():
                probe = model.module(images[:4])
                quiet_probe = quiet(images[:4]) + apex_model(images[:4])
            print(step, probe.mean().item(), quiet_probe.mean().item())
    sample_grid(net, local_rank)
    preview_after_unwrapping(net, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
