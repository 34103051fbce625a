"""A model family's base: it loads the diffusion transformer and keeps whatever the trainer hands
back after accelerate prepared it."""

from diffusers import FluxTransformer2DModel


class ModelFoundation:
    def __init__(self, config, accelerator):
        self.config = config
        self.accelerator = accelerator
        self.model = None

    def load_model(self):
        self.model = FluxTransformer2DModel.from_pretrained(self.config.model_path, subfolder="transformer")
        self.model.requires_grad_(False)

    def get_trained_component(self):
        return self.model

    def set_prepared_model(self, model):
        # after accelerator.prepare, the trainer hands the model back
        self.model = model
