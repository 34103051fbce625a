from base import DistributedTrainer


class SingleDeviceTrainer(DistributedTrainer):
    """Keeps the bare model for generation: the prepared one is only used for the update."""

    def __init__(self, model, optimizer):
        super().__init__(model, optimizer)
        self.wrapped = self.model
        self.model = model

    def generate(self, input_ids):
        max_length = self.model.config.max_position_embeddings
        return self.model.generate(input_ids, max_length=max_length)
