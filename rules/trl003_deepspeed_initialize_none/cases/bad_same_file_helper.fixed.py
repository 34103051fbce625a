import copy

import deepspeed


def _frozen_engine(model, accelerator):
    config = copy.deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    config["zero_optimization"]["stage"] = 0
    engine, *_ = deepspeed.initialize(model=model, config=config)
    engine.eval()
    return engine


class RewardTrainer:
    def __init__(self, model, accelerator, reward_model=None, use_reward_model=True):
        self.accelerator = accelerator
        self.model = accelerator.prepare(model)
        if use_reward_model:
            self.reward_model = reward_model
        else:
            self.reward_model = None
        # expect: TRL003
        if self.reward_model is not None:
            self.reward_model = _frozen_engine(self.reward_model, accelerator)
