"""A pairwise reward-model trainer on the project's base: what it stores, the base's log() averages
on rank 0 without reducing across ranks."""
import torch.nn.functional as F

from .base import StoredMetricsTrainer


class PairwiseRewardTrainer(StoredMetricsTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        rewards_chosen = model(input_ids=inputs["input_ids_chosen"], attention_mask=inputs["attention_mask_chosen"]).logits
        rewards_rejected = model(
            input_ids=inputs["input_ids_rejected"], attention_mask=inputs["attention_mask_rejected"]
        ).logits
        loss = -F.logsigmoid(rewards_chosen - rewards_rejected).mean()
        accuracy = (rewards_chosen > rewards_rejected).float().mean()
        # expect: TRL004
        self.store_metrics({"accuracy": accuracy.item(), "margin": (rewards_chosen - rewards_rejected).mean().item()})
        if return_outputs:
            return loss, {"rewards_chosen": rewards_chosen, "rewards_rejected": rewards_rejected}
        return loss


class LMWithAccuracyTrainer(StoredMetricsTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        # The base's helper computes on this rank's batch.
        accuracy = self._token_accuracy(outputs.logits, inputs["labels"])
        # expect: TRL004
        self.log({"token_accuracy": accuracy.item()})
        return (outputs.loss, outputs) if return_outputs else outputs.loss
