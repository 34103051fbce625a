from accelerate import Accelerator
from torch import nn


class PolicyWithValueHead(nn.Module):
    def __init__(self, policy, value_model):
        super().__init__()
        self.policy = policy
        self.value_model = value_model
        self.config = policy.config  # the module has a config: only the wrapper hides it

    def forward(self, **inputs):
        return self.policy(**inputs), self.value_model(**inputs)


class RolloutRunner:
    def __init__(self, policy, value_model, optimizer):
        self.accelerator = Accelerator()
        self.model = PolicyWithValueHead(policy, value_model)
        self.model, self.optimizer = self.accelerator.prepare(self.model, optimizer)

    def pad_token(self):
        # expect: TRL001
        return self.model.config.pad_token_id
