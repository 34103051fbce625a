"""The near miss of bad_project_logger_forwards: this project's RunLogger averages the values
across the processes itself before it logs them."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from utils.run_logger import RunLogger


def train(detector, optimizer, train_loader, epochs, local_rank):
    dist.init_process_group("nccl")
    detector = DistributedDataParallel(detector.cuda(local_rank), device_ids=[local_rank])
    logger = RunLogger("detector", is_main=dist.get_rank() == 0)
    step = 0
    for epoch in range(epochs):
        for images, targets in train_loader:
            outputs = detector(images.cuda(local_rank))
            class_logits = outputs["logits"]
            labels = targets["labels"].cuda(local_rank)
            loss = torch.nn.functional.cross_entropy(class_logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 50 == 0:
                precision = (class_logits.argmax(-1) == labels).float().mean()
                logger.scalars({"train/class_precision": precision.item(), "epoch": epoch}, step)
