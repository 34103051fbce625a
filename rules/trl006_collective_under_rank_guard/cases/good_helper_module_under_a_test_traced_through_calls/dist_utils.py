"""torch.distributed helpers: a per-rank logger, the latest checkpoint, a mean over every rank."""

import logging
import os

import torch.distributed as dist


def create_logger(output_dir, rank):
    logger = logging.getLogger(f"vit.rank{rank}")
    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
    logger.addHandler(logging.FileHandler(os.path.join(output_dir, f"log_rank{rank}.txt")))
    return logger


def find_latest_checkpoint(output_dir, logger):
    checkpoints = sorted(f for f in os.listdir(output_dir) if f.endswith(".pth"))
    logger.info(f"checkpoints in {output_dir}: {checkpoints}")
    return os.path.join(output_dir, checkpoints[-1]) if checkpoints else None


def reduce_mean(tensor):
    reduced = tensor.clone()
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
    return reduced / dist.get_world_size()
