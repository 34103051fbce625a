from .base import RLTrainer


class PPOTrainer(RLTrainer):
    def learn(self, prompt_loader):
        opt = self.config.optimizer(self.model.parameters())
        self.model, self.opt, prompt_loader = self.accelerator.prepare(self.model, opt, prompt_loader)
        for prompts in prompt_loader:
            texts = self.act(prompts)
            loss = self.score(texts)
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
