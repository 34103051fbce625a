# trllint-settings: {"report-rank0-loss": false}
"""bad_rank0_loss_torchrun_ddp.py with `report-rank0-loss = false`: the project accepts rank 0's
sample of the loss; the accuracy, a per-rank metric of another kind, is still reported."""

import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter


def main(model, dataset, epochs=3, lr=3e-4):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    sampler = DistributedSampler(dataset, shuffle=True)
    train_loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    writer = SummaryWriter("runs/lm") if rank == 0 else None
    if rank == 0:
        wandb.init(project="lm-pretrain")
    step = 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for input_ids, labels in train_loader:
            logits = model(input_ids.cuda())
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.cuda().flatten())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if rank == 0 and step % 10 == 0:
                wandb.log({"train/loss": loss.item(), "lr": optimizer.param_groups[0]["lr"]}, step=step)
                writer.add_scalar("train/loss", loss, step)
                # expect: TRL004
                writer.add_scalar("train/token_accuracy", (logits.argmax(-1) == labels.cuda()).float().mean(), step)
    dist.destroy_process_group()
