# trllint-settings: {"training-step-methods": ["rollout_step"]}
import torch
from transformers import Trainer


class RolloutTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        rewards = self.rollout_step(model, inputs)
        return rewards.mean()

    def rollout_step(self, policy, inputs):
        # expect: TRL001
        eos = policy.config.eos_token_id
        ids = inputs["input_ids"]
        return (ids == eos).float().sum(-1)
