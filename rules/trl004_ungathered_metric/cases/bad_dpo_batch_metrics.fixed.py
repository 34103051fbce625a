# A DPOTrainer subclass overriding get_batch_loss_metrics the way TRL's own DPO, CPO and ORPO did
# before they gathered: every rank reduces its own slice, rank 0 logs its slice only.
from typing import Literal

import torch
from trl import DPOTrainer


class MarginDPOTrainer(DPOTrainer):
    def get_batch_loss_metrics(self, model, batch, train_eval: Literal["train", "eval"] = "train"):
        metrics = {}
        model_output = self.concatenated_forward(model, batch)
        ref_chosen_logps, ref_rejected_logps = self.compute_ref_log_probs(batch)
        losses, chosen_rewards, rejected_rewards = self.dpo_loss(
            model_output["chosen_logps"], model_output["rejected_logps"], ref_chosen_logps, ref_rejected_logps
        )
        reward_accuracies = (chosen_rewards > rejected_rewards).float()

        prefix = "eval_" if train_eval == "eval" else ""
        # expect: TRL004
        metrics[f"{prefix}rewards/chosen"] = self.accelerator.gather(
            chosen_rewards.mean()
        ).mean().cpu()
        # expect: TRL004
        metrics[f"{prefix}rewards/rejected"] = self.accelerator.gather(
            rejected_rewards.mean()
        ).mean().cpu()
        # expect: TRL004
        metrics[f"{prefix}rewards/accuracies"] = self.accelerator.gather(
            reward_accuracies.mean()
        ).mean().cpu()
        # expect: TRL004
        metrics[f"{prefix}rewards/margins"] = self.accelerator.gather(
            (chosen_rewards - rejected_rewards).mean()
        ).mean().cpu()
        # expect: TRL004
        metrics[f"{prefix}logps/chosen"] = self.accelerator.gather(
            model_output["chosen_logps"].detach().mean()
        ).mean().cpu()
        metrics[f"{prefix}beta"] = self.beta
        return losses.mean(), metrics
