from .foundation import ModelFoundation


class SDXL(ModelFoundation):
    def __init__(self, config, accelerator):
        super().__init__(config, accelerator)
        # __init__ runs before any trainer holds the instance: the model is the loaded one
        self.sample_size = self.model.config.sample_size

    def post_model_load_setup(self):
        # load_model alone calls this, right after it loads the model: nothing is wrapped yet
        self.cross_attention_dim = self.model.config.cross_attention_dim
        self.model.enable_xformers_memory_efficient_attention()

    def ema_decay_shape(self):
        # set_ema keeps the unwrapped module
        return self.ema.config.sample_size


class SDXLRefiner(ModelFoundation):
    def set_prepared_model(self, model):
        # this family overrides the keeper: it keeps the bare module
        super().set_prepared_model(self.accelerator.unwrap_model(model))

    def addition_time_embed_dim(self):
        return self.model.config.addition_time_embed_dim
