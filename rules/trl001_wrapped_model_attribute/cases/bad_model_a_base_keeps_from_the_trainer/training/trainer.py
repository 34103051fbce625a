from accelerate import Accelerator

from models.flux import Flux


class Trainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator(gradient_accumulation_steps=config.accumulation)
        self.model = Flux(config, self.accelerator)
        self.model.load_model()

    def init_prepare_models(self, optimizer, lr_scheduler, train_loader):
        primary_model = self.model.get_trained_component()
        results = self.accelerator.prepare(primary_model, lr_scheduler, optimizer, train_loader)
        self.model.set_prepared_model(results[0])
        self.lr_scheduler, self.optimizer, self.train_loader = results[1:]

    def train(self):
        for batch in self.train_loader:
            with self.accelerator.accumulate(self.model.get_trained_component()):
                loss = self.model.model_predict(batch).float().mean()
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.lr_scheduler.step()
                self.optimizer.zero_grad()
