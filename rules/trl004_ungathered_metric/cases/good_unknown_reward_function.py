"""An inherited method that is no loss function scores the completions (GRPO-style reward code
may gather across ranks before it returns): its body is unknown, so its rewards are not proven
to be this rank's, and nothing is reported."""

from accelerate import Accelerator
from rl_core.trainer import OnlineTrainerBase


class ToolUseTrainer(OnlineTrainerBase):
    def __init__(self, config, policy):
        super().__init__(config)
        self.accelerator = Accelerator(log_with="wandb")
        self.policy = self.accelerator.prepare(policy)

    def training_step(self, batch, step):
        completions = self.generate(batch["prompts"])
        rewards = self._score_completions(batch["prompts"], completions)
        loss = self.policy_gradient(completions, rewards)
        self.accelerator.backward(loss)
        self.accelerator.log({"reward/mean": rewards.mean().item(), "reward/max": rewards.max().item()}, step=step)
