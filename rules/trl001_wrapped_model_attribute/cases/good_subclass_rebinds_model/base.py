from accelerate import Accelerator


class DistributedTrainer:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)
