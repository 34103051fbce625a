import torch

from .base import RLTrainer


class PPOTrainer(RLTrainer):
    @torch.no_grad()
    def act(self, inputs):
        unwrapped = self.accelerator.unwrap_model(self.model)
        return unwrapped.generate(**inputs, max_new_tokens=self.config.gen_size)

    def learn(self, loader):
        opt = torch.optim.AdamW(self.model.parameters(), lr=self.config.lr)
        self.model, self.opt, loader = self.accelerator.prepare(self.model, opt, loader)
        for inputs in loader:
            samples = self.act(inputs)
            loss = self.model(samples, labels=samples).loss
            self.accelerator.backward(loss)
            self.opt.step()
