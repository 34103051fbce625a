"""An image classifier trained under torchrun with DistributedDataParallel, validated on rank 0
alone: the wrapped model's forward broadcasts its buffers (batch norm's running statistics) from
rank 0, and the other ranks, already in the next epoch's forward, never join that broadcast."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def wrap(model, local_rank):
    return DDP(model.to(local_rank), device_ids=[local_rank])


def validate(model, loader, device):
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.to(device))
            correct += (logits.argmax(-1) == labels.to(device)).sum().item()
            total += labels.numel()
    return correct / total


class Distiller:
    """The student is wrapped once in __init__; the preview runs on the main process only."""

    def __init__(self, student, local_rank):
        self.local_rank = local_rank
        self.student = DDP(student.to(local_rank), device_ids=[local_rank])

    def preview(self, images):
        if dist.get_rank() == 0:
            with torch.no_grad():
                # expect: TRL006
                return self.student(images.to(self.local_rank)).softmax(-1)
        return None


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = torchvision.datasets.FakeData(size=4096, transform=torchvision.transforms.ToTensor())
    val_set = torchvision.datasets.FakeData(size=512, transform=torchvision.transforms.ToTensor())
    loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=64)
    model = DDP(torchvision.models.resnet18(num_classes=10).to(local_rank), device_ids=[local_rank])
    ema = wrap(torchvision.models.resnet18(num_classes=10), local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        model.train()
        for images, labels in loader:
            loss = F.cross_entropy(model(images.to(local_rank)), labels.to(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            model.eval()
            with torch.no_grad():
                # expect: TRL006
                probe = model(torch.randn(8, 3, 224, 224, device=local_rank))
                # expect: TRL006
                ema_probe = ema.forward(torch.randn(8, 3, 224, 224, device=local_rank))
            print(f"epoch {epoch}: {probe.mean().item():.3f} {ema_probe.mean().item():.3f}")
            # the forward inside validate() runs through its parameter: not asked here
            print(f"accuracy {validate(model, val_loader, local_rank):.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.1)
    main(parser.parse_args())
