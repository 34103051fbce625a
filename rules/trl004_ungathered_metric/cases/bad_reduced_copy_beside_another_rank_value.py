"""The loop all-reduces a copy of its loss for the console and logs the per-rank loss plus the
per-rank auxiliary loss: logging the copy instead would still add this rank's auxiliary loss, so
no fix renames it."""

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def train_epoch(model, optimizer, train_loader, writer: SummaryWriter, epoch):
    for step, (images, labels) in enumerate(train_loader):
        logits, aux_loss = model(images.cuda(non_blocking=True))
        loss = torch.nn.functional.cross_entropy(logits, labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        (loss + 0.01 * aux_loss).backward()
        optimizer.step()
        reduced_loss = loss.detach().clone()
        dist.all_reduce(reduced_loss)
        reduced_loss /= dist.get_world_size()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} step {step}: loss {reduced_loss.item():.4f}")
            # expect: TRL004
            writer.add_scalar("train/total_loss", loss.item() + 0.01 * aux_loss.item(), step)


def main(model, optimizer_factory, train_loader, epochs, local_rank):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = optimizer_factory(model.parameters())
    writer = SummaryWriter("runs/classifier") if dist.get_rank() == 0 else None
    for epoch in range(epochs):
        train_epoch(model, optimizer, train_loader, writer, epoch)
