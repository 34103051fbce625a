"""A model family's base: it loads the model, then the trainer hands back what accelerate
prepared. set_ema unwraps what it is handed before it keeps it."""

from diffusers import UNet2DConditionModel


class ModelFoundation:
    def __init__(self, config, accelerator):
        self.config = config
        self.accelerator = accelerator
        self.model = UNet2DConditionModel.from_pretrained(config.model_path, subfolder="unet")

    def load_model(self):
        self.model = UNet2DConditionModel.from_pretrained(self.config.model_path, subfolder="unet")
        self.model.requires_grad_(False)
        self.post_model_load_setup()

    def post_model_load_setup(self):
        pass

    def set_prepared_model(self, model):
        self.model = model

    def set_ema(self, ema):
        ema = self.accelerator.unwrap_model(ema)
        self.ema = ema
