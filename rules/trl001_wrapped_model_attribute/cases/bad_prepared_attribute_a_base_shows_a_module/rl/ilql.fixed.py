from .base import OfflineRLTrainer
from .heads import ValueHeadModel


class ILQLTrainer(OfflineRLTrainer):
    def build_model(self, config):
        return ValueHeadModel(config.model_path, num_heads=config.num_heads)

    def learn(self, loader):
        self.model, self.opt, loader = self.accelerator.prepare(self.model, self.opt, loader)
        self.model.train()
        for step, batch in enumerate(loader):
            # expect: TRL001
            loss, stats = self.accelerator.unwrap_model(self.model).loss(batch)
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
            if (step + 1) % self.config.target_sync_every == 0:
                # expect: TRL001
                self.accelerator.unwrap_model(self.model).sync_target_heads()
