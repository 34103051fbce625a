"""The draft head the training script trains."""

import torch


class DraftHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64, 4)

    def forward(self, inputs, labels):
        logits = self.proj(inputs)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        return loss, (logits.argmax(-1) == labels).float().mean().item()
