from accelerate import Accelerator
from torch import nn


class PolicyWithValueHead(nn.Module):
    """Holds two models; it has no `config` of its own, wrapped or not."""

    def __init__(self, policy, value_model):
        super().__init__()
        self.policy = policy
        self.value_model = value_model

    def forward(self, **inputs):
        return self.policy(**inputs), self.value_model(**inputs)


class RolloutRunner:
    def __init__(self, policy, value_model, optimizer, dataloader):
        self.accelerator = Accelerator()
        self.model = PolicyWithValueHead(policy, value_model)
        self.model, self.optimizer, self.dataloader = self.accelerator.prepare(self.model, optimizer, dataloader)

    def describe(self):
        # Missing on the bare module too: a plain AttributeError, not the wrapper's doing.
        if hasattr(self.model.config, "_name_or_path"):
            return self.model.config._name_or_path
        return None
