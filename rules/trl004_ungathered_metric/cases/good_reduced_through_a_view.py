"""A DDP trainer that reduces its metrics in place through what shares the tensor's storage:
``loss.div_(world)`` returns ``loss`` itself, ``.detach()`` and ``.data`` are views. Every number
it logs from rank 0 is the ranks' mean."""

import os

import torch
import torch.distributed as dist
import wandb
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def train(model, loader, optimizer, epochs):
    rank, world = dist.get_rank(), dist.get_world_size()
    for epoch in range(epochs):
        sums = {"loss": torch.zeros((), device="cuda"), "correct": torch.zeros((), device="cuda")}
        for step, (images, labels) in enumerate(loader):
            logits = model(images.cuda())
            loss = nn.functional.cross_entropy(logits, labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sums["loss"] += loss.detach()
            sums["correct"] += (logits.argmax(1) == labels.cuda()).float().mean()
            loss = loss.data.clone()
            dist.all_reduce(loss.div_(world))
            if rank == 0 and step % 50 == 0:
                wandb.log({"train/loss": loss.item()})
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        dist.all_reduce(grad_norm.detach())
        for key in sorted(sums.keys()):
            dist.all_reduce(sums[key].data)
        if rank == 0:
            wandb.log({"epoch/grad_norm": grad_norm.item() / world, **{k: v.item() / world for k, v in sums.items()}})


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(nn.Linear(784, 10).cuda(), device_ids=[local_rank])
    dataset = torch.utils.data.TensorDataset(torch.randn(4096, 784), torch.randint(0, 10, (4096,)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, sampler=torch.utils.data.DistributedSampler(dataset))
    if dist.get_rank() == 0:
        wandb.init(project="mnist-ddp")
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), epochs=5)


if __name__ == "__main__":
    main()
