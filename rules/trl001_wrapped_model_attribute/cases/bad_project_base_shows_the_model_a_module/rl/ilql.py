from .base import RLTrainer


class ILQLTrainer(RLTrainer):
    def learn(self, loader):
        self.model, self.opt, loader = self.accelerator.prepare(self.model, self.opt, loader)
        for step, batch in enumerate(loader):
            # expect: TRL001
            loss = self.model.loss(batch)
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
            if step % self.config.steps_for_target_q_sync == 0:
                # expect: TRL001
                self.model.sync_target_heads()
