# The metrics dict is built in a helper of this file and returned to compute_loss, which stores it.
import torch
import torch.nn.functional as F
from transformers import Trainer


class PairwiseRewardTrainer(Trainer):
    def _pairwise_loss_and_metrics(self, model, inputs):
        chosen = model(input_ids=inputs["chosen_input_ids"]).logits.squeeze(-1)
        rejected = model(input_ids=inputs["rejected_input_ids"]).logits.squeeze(-1)
        loss = -F.logsigmoid(chosen - rejected).mean()
        metrics = {}
        # expect: TRL004
        metrics["accuracy"] = self.accelerator.gather(
            (chosen > rejected).float().mean()
        ).mean().item()
        # expect: TRL004
        metrics["margin"] = self.accelerator.gather(
            torch.mean(chosen - rejected)
        ).mean().item()
        return loss, metrics

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, metrics = self._pairwise_loss_and_metrics(model, inputs)
        self.store_metrics(metrics, train_eval="train")
        return loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)
