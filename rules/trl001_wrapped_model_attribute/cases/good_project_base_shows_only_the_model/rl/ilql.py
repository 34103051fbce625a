from .base import RLTrainer


class ILQLTrainer(RLTrainer):
    def learn(self, loader):
        self.model, self.opt, loader = self.accelerator.prepare(self.model, self.opt, loader)
        for step, batch in enumerate(loader):
            loss = self.accelerator.unwrap_model(self.model).loss(batch)
            self.accelerator.backward(loss)
            self.opt.step()
            # the base shows self.model a module, not the optimizer the wrapper prepared beside it
            self.accelerator.log({"lr": self.opt.defaults["lr"]}, step=step)
