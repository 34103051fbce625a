"""A trainer base that keeps a scorer and a policy: it shows only the policy is a model (its
parameters go to the optimizer); the scorer is whatever the configuration builds."""

import torch
from accelerate import Accelerator


class ScoredTrainer:
    def __init__(self, config, policy, scorer):
        self.config = config
        self.accelerator = Accelerator()
        self.policy = policy
        self.scorer = scorer
        self.opt = torch.optim.AdamW(self.policy.parameters(), lr=config.lr)
