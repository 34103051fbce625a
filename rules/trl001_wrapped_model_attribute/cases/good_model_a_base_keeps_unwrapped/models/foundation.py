"""A model family's base: it keeps the bare model the trainer hands back, and the optimizer."""

from diffusers import FluxTransformer2DModel


class ModelFoundation:
    def __init__(self, config, accelerator):
        self.config = config
        self.accelerator = accelerator
        self.model = None
        self.optimizer = None

    def load_model(self):
        self.model = FluxTransformer2DModel.from_pretrained(self.config.model_path, subfolder="transformer")
        self.model.requires_grad_(False)

    def get_trained_component(self):
        return self.model

    def set_prepared_model(self, model):
        self.model = model

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer
