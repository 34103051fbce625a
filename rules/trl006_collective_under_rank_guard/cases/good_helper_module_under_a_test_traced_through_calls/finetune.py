"""ViT fine-tuning with DDP; every rank resumes from the same checkpoint folder and evaluates."""

import argparse
import os

import timm
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_loaders
from dist_utils import create_logger, find_latest_checkpoint, reduce_mean


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = torch.zeros((), device="cuda")
    for images, labels in loader:
        correct += (model(images.cuda()).argmax(-1) == labels.cuda()).float().mean()
    return reduce_mean(correct / len(loader)).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="output/vit_b16")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    logger = create_logger(args.output_dir, rank=dist.get_rank())
    model = DDP(timm.create_model("vit_base_patch16_224", num_classes=100).cuda(), device_ids=[local_rank])
    train_loader, val_loader = build_loaders(batch_size=64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    # The folder is shared: every rank finds the same checkpoint, whatever its logger.
    resume = find_latest_checkpoint(args.output_dir, logger)
    if resume:
        model.module.load_state_dict(torch.load(resume, map_location="cpu")["model"])
        logger.info(f"resumed from {resume}: accuracy {evaluate(model, val_loader):.3f}")

    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        logger.info(f"epoch {epoch}: accuracy {evaluate(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
