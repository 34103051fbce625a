"""Checkpoints of a sharded run: each rank writes its shard, rank 0 the trainer state."""

from pathlib import Path

import torch
import torch.distributed as dist

from dist_utils import barrier, global_rank


def save_file(directory, name, state, synchronize=True):
    # With synchronize, every rank calls this: the folder exists before any rank writes into it.
    target = Path(directory) / name
    if synchronize:
        barrier()
    target.parent.mkdir(parents=True, exist_ok=True)
    if synchronize:
        barrier()
    torch.save(state, target)


def save_checkpoint(directory, model, optimizer, step):
    save_file(directory, f"model_rank{global_rank()}.pt", model.state_dict())
    save_file(directory, f"optim_rank{global_rank()}.pt", optimizer.state_dict())
    if global_rank() == 0:
        # Rank 0 alone: no barrier inside.
        save_file(directory, "trainer.pt", {"step": step, "world_size": dist.get_world_size()}, synchronize=False)
    barrier()
