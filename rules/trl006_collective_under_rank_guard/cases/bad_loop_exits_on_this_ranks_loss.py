"""The near miss of good_loop_exits_on_counters_every_rank_advances.py: the exits test this
rank's own loss or its rank, so one rank leaves the loop while the others wait for it in the
next barrier."""

import torch
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


def train(model, optimizer, train_dataloader, max_train_steps):
    global_step = 0
    for batch in train_dataloader:
        loss = model(**batch).loss
        if torch.isnan(loss):
            break  # only this rank's batch went wrong
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        global_step += 1
        # expect: TRL006
        accelerator.wait_for_everyone()
        if global_step >= max_train_steps:
            break


def sync_shards(loader):
    for batch in loader:
        if dist.get_rank() == 0:
            continue  # rank 0 only reads
        # expect: TRL006
        dist.barrier()
