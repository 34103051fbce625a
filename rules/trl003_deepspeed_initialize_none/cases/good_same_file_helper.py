import copy

import deepspeed
from transformers import AutoModelForCausalLM


def _frozen_engine(model, accelerator):
    config = copy.deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    config["zero_optimization"]["stage"] = 0
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine


class RewardTrainer:
    def __init__(self, model, accelerator, reward_model_path="reward-model"):
        self.accelerator = accelerator
        self.model = accelerator.prepare(model)
        self.reward_model = AutoModelForCausalLM.from_pretrained(reward_model_path)
        self.reward_model = _frozen_engine(self.reward_model, accelerator)
