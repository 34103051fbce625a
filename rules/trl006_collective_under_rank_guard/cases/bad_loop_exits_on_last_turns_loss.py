"""The loop-carried near miss of good_loop_exits_on_a_step_resumed_from_a_checkpoint.py: the exit
tests a flag made at the top of each turn from the loss the previous turn left, this rank's own
loss, so one rank may leave while the others wait for it in the barrier."""

import os

import torch.distributed as dist


def train(model, optimizer, loader, stop_below):
    dist.init_process_group("nccl")
    device = f"cuda:{int(os.environ['LOCAL_RANK'])}"
    last_loss = float("inf")
    for batch in loader:
        converged = last_loss < stop_below
        loss = model(batch.to(device)).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        last_loss = loss.item()
        if converged:
            break
        # expect: TRL006
        dist.barrier()
