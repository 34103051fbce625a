"""An EMA built around the model (itself an nn.Module holding a copy of it) goes through
accelerator.prepare with the model: under a multi-GPU launch it is a DDP wrapper, which forwards
none of the EMA's own members. The file shows the model is a module (`.parameters()`); the EMA is
the same kind of object, built around it; `self.model = model` makes the two names one."""

from accelerate import Accelerator
from ema_pytorch import EMA


class Trainer:
    def __init__(self, model, optimizer, train_loader):
        self.accelerator = Accelerator()
        self.model = model
        self.ema_model = EMA(model, beta=0.999, update_every=10)
        self.ema_model, self.model, self.optimizer, self.train_loader = self.accelerator.prepare(
            self.ema_model, self.model, optimizer, train_loader
        )

    def train(self, steps):
        for step, batch in zip(range(steps), self.train_loader):
            loss = self.model(**batch)
            self.accelerator.backward(loss)
            self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
            # expect: TRL001
            self.accelerator.unwrap_model(self.ema_model).update()
