"""A trainer base whose `act` samples from `self.model`; the only subclass that prepares the
model overrides `act` (it samples through unwrap_model), so the base's `act` never runs on a
prepared model."""

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM


class RLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator()
        self.model = AutoModelForCausalLM.from_pretrained(config.model_path)

    @torch.no_grad()
    def act(self, inputs):
        return self.model.generate(**inputs, max_new_tokens=self.config.gen_size)
