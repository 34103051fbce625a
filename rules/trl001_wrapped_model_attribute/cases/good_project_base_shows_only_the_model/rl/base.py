"""The shared part of the RL trainers: the model, its optimizer, the accelerator."""

import torch
from accelerate import Accelerator

from .models import build_model


class RLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator(log_with="wandb")
        self.model = build_model(config.model_path)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=config.lr)

    def learn(self):
        raise NotImplementedError
