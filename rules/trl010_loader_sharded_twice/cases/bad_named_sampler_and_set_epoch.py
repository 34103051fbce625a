"""The sampler is named and its epoch set every epoch: the message says what to do, no fix
(removing the sampler would break `train_sampler.set_epoch`)."""

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler

accelerator = Accelerator()


def train(model, dataset, epochs, batch_size=8):
    train_sampler = DistributedSampler(dataset, num_replicas=accelerator.num_processes, rank=accelerator.process_index)
    # expect: TRL010
    loader = DataLoader(dataset, batch_size=batch_size, sampler=train_sampler, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def evaluate(model, dataset):
    sampler = DistributedSampler(dataset, shuffle=False) if accelerator.num_processes > 1 else None
    # expect: TRL010
    loader = accelerator.prepare_data_loader(DataLoader(dataset, batch_size=16, sampler=sampler))
    return [model(inputs).argmax(-1) for inputs, _ in loader]
