from pathlib import Path

import torch


class SpeechEncoder(torch.nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.proj = torch.nn.Linear(80, dim)
        self.head = torch.nn.Linear(dim, 80)

    def forward(self, audio, mask):
        hidden = self.proj(audio)
        return ((self.head(hidden) - audio) ** 2)[mask].mean()

    @staticmethod
    def clips(folder):
        return [torch.load(path) for path in sorted(Path(folder).glob("*.pt"))]
