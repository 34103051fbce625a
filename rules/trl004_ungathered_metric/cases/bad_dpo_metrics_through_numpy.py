# An older DPO-style trainer that reduces its metrics as NumPy arrays: each rank's own slice, and
# a gather cannot take the array, so no fix is offered (reduce the tensor, gather, then convert).
from typing import Literal

from trl import DPOTrainer


class NumpyMetricsDPOTrainer(DPOTrainer):
    def get_batch_loss_metrics(self, model, batch, train_eval: Literal["train", "eval"] = "train"):
        metrics = {}
        policy_chosen_logps, policy_rejected_logps = self.concatenated_forward(model, batch)
        reference_chosen_logps, reference_rejected_logps = self.compute_reference_log_probs(batch)
        losses, chosen_rewards, rejected_rewards = self.dpo_loss(
            policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps
        )
        prefix = "eval_" if train_eval == "eval" else ""
        # expect: TRL004
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.cpu().numpy().mean()
        # expect: TRL004
        metrics[f"{prefix}rewards/margins"] = (chosen_rewards - rejected_rewards).cpu().numpy().mean()
        return losses.mean(), metrics
