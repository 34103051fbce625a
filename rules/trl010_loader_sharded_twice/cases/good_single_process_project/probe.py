"""Its only launch is `python probe.py`: one process, where the sampler and prepare keep every example."""

import argparse

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler

from data import probe_set


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()
    accelerator = Accelerator()
    dataset = probe_set()
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset, num_replicas=accelerator.num_processes, rank=accelerator.process_index))
    model, loader = accelerator.prepare(torch.nn.Linear(8, 1), loader)
    for features, targets in loader:
        accelerator.backward(torch.nn.functional.mse_loss(model(features), targets))


if __name__ == "__main__":
    main()
