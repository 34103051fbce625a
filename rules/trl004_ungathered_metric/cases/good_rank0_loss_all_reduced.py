"""The near miss of bad_rank0_loss_torchrun_ddp.py: every rank all-reduces a copy of its loss
before rank 0 logs it, so the curve is the mean over the ranks."""

import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


def main(model, dataset, epochs=3, lr=3e-4):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    sampler = DistributedSampler(dataset, shuffle=True)
    train_loader = DataLoader(dataset, batch_size=16, sampler=sampler)
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
            if step % 10 == 0:
                mean_loss = loss.detach().clone()
                dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)
                if rank == 0:
                    wandb.log({"train/loss": mean_loss.item()}, step=step)
    dist.destroy_process_group()
