from .base import RLTrainer


class ILQLTrainer(RLTrainer):
    def learn(self, loader):
        self.model, loader = self.accelerator.prepare(self.model, loader)
        for step, batch in enumerate(loader):
            # the base's other class shows its own self.model a module, not this one
            loss = self.model.loss(batch)
            self.accelerator.backward(loss)
