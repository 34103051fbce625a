"""A PatchGAN discriminator for the adversarial loss."""

import torch


class PatchDiscriminator(torch.nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(3, channels, 4, 2, 1),
            torch.nn.LeakyReLU(0.2),
            torch.nn.Conv2d(channels, 1, 4, 1, 1),
        )

    def forward(self, x):
        return self.net(x)
