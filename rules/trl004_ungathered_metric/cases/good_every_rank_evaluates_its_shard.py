"""The near miss of bad_rank0_evaluates_its_shard.py: every rank evaluates its own shard and the
ranks' losses are averaged before the master process logs them."""

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
    total, batches = torch.zeros((), device="cuda"), 0
    for x, y in loader:
        _, loss = model(x.cuda(), y.cuda())
        total += loss
        batches += 1
        if batches == max_batches:
            break
    model.train()
    mean = total / max(batches, 1)
    dist.all_reduce(mean, op=dist.ReduceOp.AVG)
    return mean


def train(model, train_set, val_set, max_iters, eval_interval=250):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    train_loader = DataLoader(train_set, batch_size=12, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=12, sampler=DistributedSampler(val_set, shuffle=False))
    for iteration, (x, y) in zip(range(max_iters), train_loader):
        if iteration % eval_interval == 0:
            val_loss = estimate_loss(model.module, val_loader)
            if master_process:
                wandb.log({"iter": iteration, "val/loss": val_loss.item()})
        _, loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
