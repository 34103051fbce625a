from accelerate import Accelerator

from models.sdxl import SDXL


class Trainer:
    def __init__(self, config):
        self.accelerator = Accelerator()
        self.model = SDXL(config, self.accelerator)
        self.model.load_model()

    def init_prepare_models(self, ema, optimizer, train_loader):
        results = self.accelerator.prepare(self.model.model, ema, optimizer, train_loader)
        self.model.set_prepared_model(results[0])
        self.model.set_ema(results[1])
        self.optimizer, self.train_loader = results[2], results[3]
