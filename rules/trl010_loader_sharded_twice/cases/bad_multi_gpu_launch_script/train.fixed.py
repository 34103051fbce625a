"""Launched on four GPUs: each rank trains on a sixteenth of the set."""

import argparse

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler

from data import synthetic_classification


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    accelerator = Accelerator()
    dataset = synthetic_classification()
    # expect: TRL010
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    model = torch.nn.Linear(32, 10)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for _ in range(args.epochs):
        for features, labels in loader:
            accelerator.backward(torch.nn.functional.cross_entropy(model(features), labels))
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
