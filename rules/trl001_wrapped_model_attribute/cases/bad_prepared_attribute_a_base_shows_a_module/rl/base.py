"""An offline RL trainer base: it builds the policy, freezes its lower blocks and hands its
parameters to the optimizer; each algorithm's subclass prepares and trains it."""

import torch
from accelerate import Accelerator


class OfflineRLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator()
        self.model = self.build_model(config)
        for block in self.model.blocks[: config.frozen_blocks]:
            block.requires_grad_(False)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=config.lr)

    def build_model(self, config):
        raise NotImplementedError
