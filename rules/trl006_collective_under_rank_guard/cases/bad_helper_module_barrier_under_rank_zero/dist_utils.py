"""Helpers for torch.distributed runs: setup, and checkpoints every rank agrees on."""

import os

import torch
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def is_main():
    return dist.get_rank() == 0


def save_and_sync(model, optimizer, epoch, path):
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)
    # The other ranks may read the file as soon as this returns.
    dist.barrier()
