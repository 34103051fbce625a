"""The loop all-reduces a copy of its loss and prints the ranks' mean, but hands the dashboard
the per-rank loss it started from; the accuracy goes the same way through a helper that
averages over the ranks."""

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def average_across_ranks(value):
    value = value.detach().clone()
    dist.all_reduce(value)
    return value / dist.get_world_size()


def train_epoch(model, optimizer, train_loader, writer: SummaryWriter, epoch, log_every=20):
    model.train()
    for step, (images, labels) in enumerate(train_loader):
        logits = model(images.cuda(non_blocking=True))
        loss = torch.nn.functional.cross_entropy(logits, labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            reduced_loss = loss.detach().clone()
            dist.all_reduce(reduced_loss)
            reduced_loss /= dist.get_world_size()
            accuracy = (logits.argmax(1) == labels.cuda()).float().mean()
            mean_accuracy = average_across_ranks(accuracy)
            if dist.get_rank() == 0:
                print(f"epoch {epoch} step {step}: loss {reduced_loss.item():.4f} acc {mean_accuracy.item():.3f}")
                global_step = epoch * len(train_loader) + step
                # expect: TRL004
                writer.add_scalar("train/loss", reduced_loss.item(), global_step)
                # expect: TRL004
                writer.add_scalar("train/accuracy", mean_accuracy.item(), global_step)


def main(model, optimizer_factory, train_loader, epochs, local_rank):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = optimizer_factory(model.parameters())
    writer = SummaryWriter("runs/classifier") if dist.get_rank() == 0 else None
    for epoch in range(epochs):
        train_epoch(model, optimizer, train_loader, writer, epoch)
