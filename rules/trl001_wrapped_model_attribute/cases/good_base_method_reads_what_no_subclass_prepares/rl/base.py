"""An RL trainer base that reads its reward model's and its policy's members; its subclass
prepares only the policy, and the base reads the policy through unwrap_model."""

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification


class RLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator()
        self.policy = AutoModelForCausalLM.from_pretrained(config.policy_path)
        self.reward_model = AutoModelForSequenceClassification.from_pretrained(config.reward_path)

    @torch.no_grad()
    def act(self, inputs):
        samples = self.accelerator.unwrap_model(self.policy).generate(**inputs, max_new_tokens=self.config.gen_size)
        pad_id = self.reward_model.config.pad_token_id
        return samples, pad_id
