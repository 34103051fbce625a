"""Swin-style fine-tuning: the logger is made for this rank (it prints on rank 0 only), and the
resume helper is handed it to report what it finds. Which checkpoint the helper finds depends on
the output folder, the same on every rank, not on the logger: every rank resumes, and every rank
enters the barrier after loading."""

import os

import torch
import torch.distributed as dist


def create_logger(output_dir, dist_rank=0, name=""):
    import logging

    log = logging.getLogger(name)
    log.setLevel(logging.INFO if dist_rank == 0 else logging.WARNING)
    return log


def auto_resume_helper(output_dir, logger):
    checkpoints = sorted(f for f in os.listdir(output_dir) if f.endswith(".pth"))
    if not checkpoints:
        return None
    latest = os.path.join(output_dir, checkpoints[-1])
    logger.info(f"auto resuming from {latest}")
    return latest


def main(config, model, optimizer):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    logger = create_logger(config.OUTPUT, dist_rank=rank, name=config.MODEL.NAME)
    resume_file = auto_resume_helper(config.OUTPUT, logger)
    if resume_file:
        checkpoint = torch.load(resume_file, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        dist.barrier()
    for epoch in range(config.TRAIN.EPOCHS):
        model.train()
