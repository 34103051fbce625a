"""A detector's training loop: the project's RunLogger hands what it gets to wandb and
TensorBoard, so what rank 0 gives it is logged as the run's."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from utils.run_logger import RunLogger


def train(detector, optimizer, train_loader, epochs, local_rank):
    dist.init_process_group("nccl")
    detector = DistributedDataParallel(detector.cuda(local_rank), device_ids=[local_rank])
    logger = RunLogger("detector", "runs/detector") if dist.get_rank() == 0 else None
    step = 0
    for epoch in range(epochs):
        for images, targets in train_loader:
            outputs = detector(images.cuda(local_rank))
            box_loss = torch.nn.functional.smooth_l1_loss(outputs["boxes"], targets["boxes"].cuda(local_rank))
            class_logits = outputs["logits"]
            labels = targets["labels"].cuda(local_rank)
            loss = box_loss + torch.nn.functional.cross_entropy(class_logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if logger is not None and step % 50 == 0:
                precision = (class_logits.argmax(-1) == labels).float().mean()
                # expect: TRL004
                logger.scalars({"train/class_precision": precision.item(), "epoch": epoch}, step)
                # expect: TRL004
                logger.scalar("train/box_error", (outputs["boxes"] - targets["boxes"].cuda(local_rank)).abs().mean().item(), step)
    if logger is not None:
        logger.close()
