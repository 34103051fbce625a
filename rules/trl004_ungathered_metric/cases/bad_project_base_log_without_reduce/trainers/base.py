"""The project's base trainer: stores metrics per step and averages them into the logs (as TRL's
DPOTrainer did), on this process only."""
from collections import defaultdict

import torch
from transformers import Trainer


class StoredMetricsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs, start_time=None):
        train_eval = "train" if "loss" in logs else "eval"
        for key, metrics in self._stored_metrics[train_eval].items():
            logs[key] = torch.tensor(metrics).mean().item()
        del self._stored_metrics[train_eval]
        return super().log(logs, start_time)

    def _token_accuracy(self, logits, labels):
        mask = labels != -100
        return ((logits.argmax(-1) == labels) & mask).sum().float() / mask.sum()
