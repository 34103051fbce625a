"""The near miss of bad_epoch_accuracy_appended_per_rank.py: each step's accuracy is averaged over
the ranks before it is appended, so the list holds the run's accuracies."""

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def train(model, optimizer, loader, sampler, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    writer = SummaryWriter("runs/classify") if rank == 0 else None
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        epoch_accuracies = []
        for images, labels in loader:
            logits = model(images.cuda())
            loss = torch.nn.functional.cross_entropy(logits, labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            accuracy = (logits.argmax(1) == labels.cuda()).float().mean()
            dist.all_reduce(accuracy, op=dist.ReduceOp.AVG)
            epoch_accuracies.append(accuracy.item())
        if rank == 0:
            writer.add_scalar("train/accuracy", sum(epoch_accuracies) / len(epoch_accuracies), epoch)
