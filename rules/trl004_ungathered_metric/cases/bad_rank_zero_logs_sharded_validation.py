"""The near miss of good_rank_zero_validates_whole_set.py: every rank validates its own shard
of the validation set (a loader built with this rank's sampler), and rank 0 logs its own
shard's accuracy as the run's."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


def make_loader(dataset, batch_size, rank=-1):
    sampler = None if rank == -1 else DistributedSampler(dataset, shuffle=False)
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, sampler=sampler)


def evaluate(model, loader):
    correct, seen = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images.cuda()).argmax(1) == labels.cuda()).sum().item()
            seen += labels.numel()
    return correct / seen


def train(model, train_set, val_set, epochs, batch_size):
    dist.init_process_group("nccl")
    torch.cuda.set_device(LOCAL_RANK)
    model = DistributedDataParallel(model.cuda(), device_ids=[LOCAL_RANK])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainloader = make_loader(train_set, batch_size, rank=LOCAL_RANK)
    valloader = make_loader(val_set, batch_size, rank=LOCAL_RANK)
    writer = SummaryWriter("runs/classify") if RANK in {-1, 0} else None
    for epoch in range(epochs):
        for images, labels in trainloader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        top1 = evaluate(model, valloader)
        if RANK in {-1, 0}:
            # expect: TRL004
            writer.add_scalar("metrics/accuracy_top1", top1, epoch)
