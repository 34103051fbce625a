"""A trainer that keeps one model or a dict of models (a GAN's generator and discriminators):
in the arm where `self.model` is a dict, `.keys()` and `.items()` are the dict's, not members
read through a wrapper; each entry is prepared and switched to train mode on its own."""

import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, cfg, model):
        self.cfg = cfg
        self.accelerator = Accelerator()
        self.model = model
        if isinstance(self.model, dict):
            params = [p for m in self.model.values() for p in m.parameters()]
        else:
            params = self.model.parameters()
        self.optimizer = torch.optim.AdamW(params, lr=cfg.lr)

    def prepare(self):
        if isinstance(self.model, dict):
            for key in self.model.keys():
                self.model[key] = self.accelerator.prepare(self.model[key])
        else:
            self.model = self.accelerator.prepare(self.model)
        self.optimizer = self.accelerator.prepare(self.optimizer)

    def train_epoch(self, loader):
        if isinstance(self.model, (dict, list)):
            for key, module in self.model.items():
                module.train()
        else:
            self.model.train()
        for batch in loader:
            loss = self.model(batch) if not isinstance(self.model, dict) else self.model["generator"](batch)
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()
