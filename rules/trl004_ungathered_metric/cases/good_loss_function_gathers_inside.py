"""The near miss of bad_loss_function_outputs_logged.py: this trainer's own loss function gathers
the rewards across ranks before it returns them."""

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from preference_core.trainer import PairwiseTrainerBase


class MarginPreferenceTrainer(PairwiseTrainerBase):
    def __init__(self, config, policy, reference):
        super().__init__(config)
        self.accelerator = Accelerator(log_with="wandb")
        self.policy, self.reference = self.accelerator.prepare(policy, reference)
        self.beta = config.beta

    def _loss_fn(self, policy_logps, ref_logps):
        ratios = self.beta * (policy_logps - ref_logps)
        chosen, rejected = ratios[0::2], ratios[1::2]
        loss = -F.logsigmoid(chosen - rejected).mean()
        chosen_rewards = self.accelerator.gather_for_metrics(chosen.detach())
        rejected_rewards = self.accelerator.gather_for_metrics(rejected.detach())
        return loss, chosen_rewards, rejected_rewards

    def training_step(self, batch, step):
        policy_logps = self.policy(batch["input_ids"], attention_mask=batch["attention_mask"]).logits.sum(-1)
        with torch.no_grad():
            ref_logps = self.reference(batch["input_ids"], attention_mask=batch["attention_mask"]).logits.sum(-1)
        loss, chosen_rewards, rejected_rewards = self._loss_fn(policy_logps, ref_logps)
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.accelerator.log(
            {
                "rewards/chosen": chosen_rewards.mean().item(),
                "rewards/margin": (chosen_rewards - rejected_rewards).mean().item(),
                "step": step,
            },
            step=step,
        )
