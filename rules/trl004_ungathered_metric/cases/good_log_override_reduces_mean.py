# The class's own log() stacks the stored per-rank means and reduces them across ranks with
# accelerator.reduce(..., "mean") before logging: every stored value is logged as the run's.
from typing import Literal

import torch
from transformers import Trainer
from trl import DPOTrainer


class PaddedReduceDPOTrainer(DPOTrainer):
    def get_batch_loss_metrics(self, model, batch, train_eval: Literal["train", "eval"] = "train"):
        metrics = {}
        model_output = self.concatenated_forward(model, batch)
        ref_chosen_logps, ref_rejected_logps = self.compute_ref_log_probs(batch)
        losses, chosen_rewards, rejected_rewards = self.dpo_loss(
            model_output["chosen_logps"], model_output["rejected_logps"], ref_chosen_logps, ref_rejected_logps
        )
        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.mean().item()
        metrics[f"{prefix}rewards/rejected"] = rejected_rewards.mean().item()
        metrics[f"{prefix}rewards/accuracies"] = (chosen_rewards > rejected_rewards).float().mean().item()
        metrics[f"{prefix}logps/chosen"] = model_output["chosen_logps"].mean().item()
        return losses.mean(), metrics

    def log(self, logs, *args, **kwargs):
        train_eval = "train" if "loss" in logs else "eval"
        key_list, metric_list = [], []
        for key, values in self._stored_metrics[train_eval].items():
            key_list.append(key)
            metric_list.append(torch.tensor(values, dtype=torch.float).to(self.accelerator.device).mean().item())
        del self._stored_metrics[train_eval]
        while len(metric_list) < 8:  # every rank must reduce a tensor of the same length
            key_list.append(f"dummy_{len(metric_list)}")
            metric_list.append(0.0)
        metric_list = torch.tensor(metric_list, dtype=torch.float).to(self.accelerator.device)
        metric_list = self.accelerator.reduce(metric_list, "mean").tolist()
        for key, metric in zip(key_list, metric_list):
            if not key.startswith("dummy_"):
                logs[key] = metric
        return Trainer.log(self, logs, *args, **kwargs)
