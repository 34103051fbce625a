"""Rank 0 evaluates alone, each time through a path that enters no collective: the bare model
under the DDP wrapper (`model.module`), a second wrapper told not to broadcast its buffers, and a
model the script never wraps. Every rank runs the wrapped model's forward in training."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model, teacher, probe, train_loader, val_loader):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.to(rank), device_ids=[rank])
    teacher = DDP(teacher.to(rank), device_ids=[rank], broadcast_buffers=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, labels in train_loader:
        with torch.no_grad():
            targets = teacher(images.to(rank))
        loss = torch.nn.functional.mse_loss(model(images.to(rank)), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        with torch.no_grad():
            for images, labels in val_loader:
                student_logits = model.module(images.to(rank))
                teacher_logits = teacher(images.to(rank))
                probe_logits = probe(images.to(rank))
                print((student_logits.argmax(-1) == labels.to(rank)).float().mean().item())
                print((teacher_logits.argmax(-1) == probe_logits.argmax(-1)).float().mean().item())
    dist.destroy_process_group()
