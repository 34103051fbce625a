"""The shared part of the RL trainers. The evaluator holds a model; the trainer's `self.model`
is whatever a subclass builds, and nothing here shows it is one."""

import torch
from accelerate import Accelerator


class Evaluator:
    def __init__(self, model):
        self.model = model
        self.model.requires_grad_(False)


class RLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator(log_with="wandb")
        self.model = self.build(config)

    def build(self, config):
        raise NotImplementedError
