"""Precomputed latents and text embeddings, one batch per step."""

import torch
from torch.utils.data import DataLoader


def build_dataloader(path="latents.pt", batch_size=4):
    records = torch.load(path)
    return DataLoader(records, batch_size=batch_size, shuffle=True)
