"""The training set: plain tensors, whole; the loader and its sampler are made in train.py."""

import torch
from torch.utils.data import TensorDataset


def synthetic_classification(examples=4096, features=32, classes=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(examples, features, generator=generator)
    return TensorDataset(inputs, torch.randint(0, classes, (examples,), generator=generator))
