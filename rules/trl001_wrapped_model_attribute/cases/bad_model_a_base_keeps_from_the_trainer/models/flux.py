import torch

from .foundation import ModelFoundation


class Flux(ModelFoundation):
    def model_predict(self, batch):
        latents = batch["noisy_latents"]
        B, C, H, W = latents.shape
        # expect: TRL001
        patch = self.model.config.patch_size
        # expect: TRL001
        ids = torch.zeros(self.model.max_seq, 3)
        ids[: (H // patch) * (W // patch)] = 1
        return self.model(latents, timestep=batch["timesteps"], img_ids=ids).sample

    def fuse_qkv_projections(self, processor):
        # expect: TRL001
        self.model.set_attn_processor(processor)
