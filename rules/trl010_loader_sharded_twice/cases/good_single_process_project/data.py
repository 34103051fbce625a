"""The probe's data: random features and targets, whole."""

import torch
from torch.utils.data import TensorDataset


def probe_set(examples=512, features=8):
    return TensorDataset(torch.randn(examples, features), torch.randn(examples, 1))
