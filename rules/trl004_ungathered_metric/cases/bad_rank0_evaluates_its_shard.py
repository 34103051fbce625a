"""A GPT training script: the validation loader hands each rank its shard of the validation set,
but only the master process evaluates, over its own shard, and logs the result as the run's
validation loss."""

import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

ddp_rank = int(os.environ.get("RANK", 0))
master_process = ddp_rank == 0


@torch.no_grad()
def estimate_loss(model, loader, max_batches=50):
    model.eval()
    total, batches = 0.0, 0
    for x, y in loader:
        _, loss = model(x.cuda(), y.cuda())
        total += loss.item()
        batches += 1
        if batches == max_batches:
            break
    model.train()
    return total / max(batches, 1)


def train(model, train_set, val_set, max_iters, eval_interval=250):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    train_loader = DataLoader(train_set, batch_size=12, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=12, sampler=DistributedSampler(val_set, shuffle=False))
    for iteration, (x, y) in zip(range(max_iters), train_loader):
        if iteration % eval_interval == 0 and master_process:
            val_loss = estimate_loss(model.module, val_loader)
            # expect: TRL004
            wandb.log({"iter": iteration, "val/loss": val_loss})
        _, loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
