from accelerate import Accelerator


class BaseTrainer:
    """Like transformers' Trainer: self.model stays the bare model, the wrapper is kept beside it."""

    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model = model
        self.model_wrapped, self.optimizer = self.accelerator.prepare(model, optimizer)

    def training_step(self, batch):
        return self.model_wrapped(**batch).loss
