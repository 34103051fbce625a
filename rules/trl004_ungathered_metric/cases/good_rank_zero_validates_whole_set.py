"""A torchrun classification script: rank 0 alone keeps the EMA model and a validation loader
built over the whole validation set (no sampler, not sharded), and validates once an epoch
under its own rank test. Its accuracy and loss are the whole set's, not a rank's slice: nothing
to gather."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


class WeightAverage:
    def __init__(self, model, decay=0.9999):
        self.averaged = torch.optim.swa_utils.AveragedModel(model)
        self.decay = decay

    def update(self, model):
        self.averaged.update_parameters(model)


def make_loader(dataset, batch_size, rank=-1):
    sampler = None if rank == -1 else DistributedSampler(dataset, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, shuffle=sampler is None, sampler=sampler)


def evaluate(model, loader, criterion):
    model.eval()
    correct, seen, loss = 0, 0, 0.0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.cuda())
            loss += criterion(logits, labels.cuda()).item()
            correct += (logits.argmax(1) == labels.cuda()).sum().item()
            seen += labels.numel()
    model.train()
    return correct / seen, loss / len(loader)


def train(model, train_set, val_set, epochs, batch_size):
    dist.init_process_group("nccl")
    torch.cuda.set_device(LOCAL_RANK)
    model = DistributedDataParallel(model.cuda(), device_ids=[LOCAL_RANK])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    trainloader = make_loader(train_set, batch_size // dist.get_world_size(), rank=LOCAL_RANK)
    average = WeightAverage(model.module) if RANK in {-1, 0} else None
    if RANK in {-1, 0}:
        valloader = make_loader(val_set, batch_size * 2, rank=-1)
        writer = SummaryWriter("runs/classify")
    for epoch in range(epochs):
        for i, (images, labels) in enumerate(trainloader):
            loss = criterion(model(images.cuda()), labels.cuda())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if average:
                average.update(model.module)
        if RANK in {-1, 0}:
            top1, val_loss = evaluate(average.averaged, valloader, criterion)
            writer.add_scalar("metrics/accuracy_top1", top1, epoch)
            writer.add_scalar("val/loss", val_loss, epoch)
