import torch

from .foundation import ModelFoundation


class Flux(ModelFoundation):
    def model_predict(self, batch):
        latents = batch["noisy_latents"]
        B, C, H, W = latents.shape
        # the trainer hands back the unwrapped model: its own members are there
        patch = self.model.config.patch_size
        ids = torch.zeros(self.model.max_seq, 3)
        ids[: (H // patch) * (W // patch)] = 1
        return self.model(latents, timestep=batch["timesteps"], img_ids=ids).sample

    def learning_rate(self):
        # an optimizer accelerate prepared: its param_groups are the optimizer's own
        return self.optimizer.param_groups[0]["lr"]

