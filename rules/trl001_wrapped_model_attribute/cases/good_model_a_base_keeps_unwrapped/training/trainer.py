from accelerate import Accelerator

from models.flux import Flux


class Trainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator()
        self.model = Flux(config, self.accelerator)
        self.model.load_model()

    def init_prepare_models(self, optimizer, train_loader):
        results = self.accelerator.prepare(self.model.get_trained_component(), optimizer, train_loader)
        self.model.set_optimizer(results[1])
        self.model.set_prepared_model(self.accelerator.unwrap_model(results[0]))
        self.prepared, self.train_loader = results[0], results[2]
