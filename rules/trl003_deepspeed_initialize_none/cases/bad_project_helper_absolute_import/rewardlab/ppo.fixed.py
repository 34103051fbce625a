from typing import Optional

import torch
from torch import nn

from rewardlab import deepspeed_engines as engines
from rewardlab.deepspeed_engines import build_inference_engine


def _frozen(model, ds_config):
    """An inference engine for a model that is never trained."""
    return engines.build_inference_engine(model, ds_config)


class PPOTrainer:
    def __init__(self, args, policy: nn.Module, ds_config: dict, reward_model: Optional[nn.Module] = None, value_model=None):
        self.args = args
        optimizer = torch.optim.AdamW(policy.parameters(), lr=args.learning_rate)
        self.policy, self.optimizer, _, _ = engines.build_train_engine(args, policy, optimizer, ds_config)
        # expect: TRL003
        if reward_model is not None:
            self.reward_model = build_inference_engine(reward_model, ds_config)
        # expect: TRL003
        if value_model is not None:
            self.value_model = _frozen(value_model, ds_config)
