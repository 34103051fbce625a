# Appending to TRL's _stored_metrics directly, from compute_loss.
import torch
from trl import DPOTrainer


class SafetyDPOTrainer(DPOTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = self.concatenated_forward(model, inputs)
        refs = self.compute_ref_log_probs(inputs)
        loss, chosen_rewards, rejected_rewards = self.dpo_loss(outputs["chosen_logps"], outputs["rejected_logps"], *refs)
        # expect: TRL004
        self._stored_metrics["train"]["rewards/chosen"].append(self.accelerator.gather(
            chosen_rewards.mean()
        ).mean().item())
        self._stored_metrics["train"]["rewards/accuracies"].append(
            # expect: TRL004
            self.accelerator.gather(
                (chosen_rewards > rejected_rewards).float().mean()
            ).mean().item()
        )
        return loss.mean()
