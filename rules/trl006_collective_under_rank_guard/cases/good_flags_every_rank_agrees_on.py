"""Loops that leave together: the flag was gathered, reduced or broadcast first, or the data ran
out (every rank's shard has the same number of batches)."""
import torch
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


def train_until_diverged(model, loader, optimizer):
    for batch in loader:
        loss = model(**batch).loss
        diverged = torch.tensor(float(loss.isnan()), device=accelerator.device)
        finished = accelerator.gather(diverged).max()
        if finished:
            break
        accelerator.backward(loss)
        optimizer.step()
        accelerator.wait_for_everyone()


def train_until_rank_zero_stops(model, loader, optimizer, should_stop, local_rank):
    for batch in loader:
        stop = torch.tensor(float(should_stop()), device=f"cuda:{local_rank}")
        dist.broadcast(stop, 0)  # rank 0 decides for everyone
        if stop.item():
            break
        model(**batch).loss.backward()
        dist.barrier()


def train_until_any_rank_overflows(model, loader, optimizer):
    for batch in loader:
        loss = model(**batch).loss
        overflow = torch.tensor(float(loss.isinf()), device=loss.device)
        dist.all_reduce(overflow, op=dist.ReduceOp.MAX)
        if overflow.item() > 0:
            continue
        loss.backward()
        dist.barrier()


def train_steps(model, loader, optimizer, local_rank):
    batches = iter(loader)
    while True:
        batch = next(batches, None)
        if batch is None:  # the shards are padded to one length: every rank runs out at once
            break
        model(**batch).loss.backward()
        optimizer.step()
        dist.barrier()
