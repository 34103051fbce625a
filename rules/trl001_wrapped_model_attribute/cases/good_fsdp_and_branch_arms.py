import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel
from torch.nn.parallel import DistributedDataParallel


class Classifier(nn.Module):
    def __init__(self, num_classes=1000, width=1024):
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(nn.Linear(3 * 32 * 32, width), nn.GELU(), nn.Linear(width, width))
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x.flatten(1)))


def train_fsdp(rank):
    # FSDP forwards what it does not define to the wrapped module.
    model = FullyShardedDataParallel(Classifier().to(rank))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(100):
        images = torch.randn(32, 3, 32, 32, device=rank)
        labels = torch.randint(0, model.num_classes, (32,), device=rank)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train(args):
    model = Classifier().cuda()
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # The arm the branch left bare reads the model itself.
    num_classes = model.module.num_classes if args.distributed else model.num_classes
    for _ in range(100):
        images = torch.randn(32, 3, 32, 32).cuda()
        labels = torch.randint(0, num_classes, (32,)).cuda()
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if args.distributed:
        head = model.module.head
    else:
        head = model.head
    torch.save(head.state_dict(), "head.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--fsdp", action="store_true")
    args = parser.parse_args()
    if args.distributed or args.fsdp:
        dist.init_process_group("nccl")
    if args.fsdp:
        train_fsdp(int(os.environ["LOCAL_RANK"]))
    else:
        train(args)
