"""The near miss of bad_rank0_loss_launched_by_script: scripts/pretrain.sh starts this script with
torchrun on one process (`--nproc_per_node 1`, one node), a process group of one whose rank 0 holds
every batch: the loss it logs is the run's."""

import argparse

import torch
import torch.distributed as dist
import wandb
from torch.utils.data import DataLoader, DistributedSampler

from model import SpeechEncoder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/clips")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-4)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    encoder = torch.compile(SpeechEncoder().cuda())
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=args.lr)
    if rank == 0:
        wandb.init(project="speech-encoder", config=vars(args))
    clips = SpeechEncoder.clips(args.data)
    train_loader = DataLoader(clips, batch_size=args.batch_size, sampler=DistributedSampler(clips))
    for step, batch in enumerate(train_loader):
        loss = encoder(batch["audio"].cuda(), batch["mask"].cuda())
        loss.backward()
        for parameter in encoder.parameters():
            dist.all_reduce(parameter.grad, op=dist.ReduceOp.AVG)
        optimizer.step()
        optimizer.zero_grad()
        if rank == 0 and step % 100 == 0:
            wandb.log({"pretrain/loss": loss.item()}, step=step)


if __name__ == "__main__":
    main()
