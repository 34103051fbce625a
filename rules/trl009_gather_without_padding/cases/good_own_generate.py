"""A model with its own sampling loop (nanoGPT-style): it always adds max_new_tokens tokens to
prompts of one length, so every rank's samples have the same shape."""

import torch
from accelerate import Accelerator
from torch import nn
from torch.nn import functional as F


class TinyGPT(nn.Module):
    def __init__(self, vocab_size=256, width=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, width)
        self.head = nn.Linear(width, vocab_size)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits = self.head(self.embed(idx))[:, -1, :] / temperature
            idx = torch.cat((idx, torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)), dim=1)
        return idx


def sample(accelerator: Accelerator, model, start_ids):
    samples = model.generate(start_ids, max_new_tokens=100)
    return accelerator.gather(samples)
