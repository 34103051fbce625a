"""A torchrun script that evaluates on rank 0 alone with the model still in its DDP wrapper. The
wrapper's forward first broadcasts the model's buffers from rank 0 (the batch-norm statistics)
whenever the forward before it ran with gradients, so rank 0 waits in that broadcast while the
other ranks have gone on to the next epoch."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def wrap(model, rank):
    return DistributedDataParallel(model.to(rank), device_ids=[rank])


def main(model, train_loader, val_loader, epochs):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = wrap(model, rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        model.train()
        for images, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images.to(rank)), labels.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            model.eval()
            correct = 0
            with torch.no_grad():
                for images, labels in val_loader:
                    # expect: TRL006
                    logits = model(images.to(rank))
                    correct += (logits.argmax(-1) == labels.to(rank)).sum().item()
            print(f"epoch {epoch}: {correct} correct")
    dist.destroy_process_group()
