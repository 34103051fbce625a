"""A torchrun script: the DistributedSampler is the only sharding (accelerate only for the model)."""

import os

import torch
import torch.distributed as dist
from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def train(model, dataset, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=2)
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs.to(local_rank)), targets.to(local_rank))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def train_with_accelerate_model_only(model, dataset):
    accelerator = Accelerator()
    sampler = DistributedSampler(dataset, num_replicas=accelerator.num_processes, rank=accelerator.process_index)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    # only the model and optimizer are prepared: the loader keeps its own sampler, cut once
    model, optimizer = accelerator.prepare(model, torch.optim.SGD(model.parameters(), lr=0.1))
    for inputs, targets in loader:
        accelerator.backward(torch.nn.functional.mse_loss(model(inputs.to(accelerator.device)), targets))
