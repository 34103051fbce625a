from .base import RLTrainer


class PPOTrainer(RLTrainer):
    def learn(self, prompt_loader):
        opt = self.config.optimizer(self.policy.parameters())
        self.policy, self.opt, prompt_loader = self.accelerator.prepare(self.policy, opt, prompt_loader)
        for inputs in prompt_loader:
            samples, pad_id = self.act(inputs)
            loss = self.policy(samples, labels=samples).loss
            self.accelerator.backward(loss)
            self.opt.step()
