# TRL's DPO after the fix: every metric is gathered across processes before it is reduced.
from typing import Literal

from trl import DPOTrainer


class GatheredDPOTrainer(DPOTrainer):
    def get_batch_loss_metrics(self, model, batch, train_eval: Literal["train", "eval"] = "train"):
        metrics = {}
        model_output = self.concatenated_forward(model, batch)
        ref_chosen_logps, ref_rejected_logps = self.compute_ref_log_probs(batch)
        losses, chosen_rewards, rejected_rewards = self.dpo_loss(
            model_output["chosen_logps"], model_output["rejected_logps"], ref_chosen_logps, ref_rejected_logps
        )
        reward_accuracies = (chosen_rewards > rejected_rewards).float()
        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = self.accelerator.gather_for_metrics(chosen_rewards).mean().item()
        metrics[f"{prefix}rewards/accuracies"] = self.accelerator.gather_for_metrics(reward_accuracies).mean().item()
        metrics[f"{prefix}rewards/margins"] = (
            self.accelerator.gather_for_metrics(chosen_rewards - rejected_rewards).mean().item()
        )
        metrics[f"{prefix}logps/chosen"] = (
            self.accelerator.gather_for_metrics(model_output["chosen_logps"]).detach().mean().item()
        )
        return losses.mean(), metrics
