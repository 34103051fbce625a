"""The near miss of bad_prepared_ema_built_around_the_model.py: diffusers' EMAModel is built from
the model's parameters, not around the model, and is no nn.Module: nothing shows that the prepared
object is a model, and accelerate hands back what it cannot wrap unchanged."""

from accelerate import Accelerator
from diffusers.training_utils import EMAModel


class Trainer:
    def __init__(self, model, optimizer, train_loader):
        self.accelerator = Accelerator()
        self.model = model
        self.ema_model = EMAModel(model.parameters(), decay=0.999)
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
            self.ema_model.copy_to(self.model.parameters())
