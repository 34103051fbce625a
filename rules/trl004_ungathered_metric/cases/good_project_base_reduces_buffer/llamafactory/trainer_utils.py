"""The project's preference-trainer base (LLaMA-Factory style): log() averages the stored metrics
on each rank, then reduces them across ranks before they reach the loggers."""
from collections import defaultdict

import torch
import torch.distributed as dist
from transformers import Trainer


class PreferenceTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs, *args, **kwargs):
        train_eval = "train" if "loss" in logs else "eval"
        key_list, metric_list = [], []
        for key, metrics in self._stored_metrics[train_eval].items():
            key_list.append(key)
            metric_list.append(torch.tensor(metrics, dtype=torch.float).to(self.accelerator.device).mean().item())
        del self._stored_metrics[train_eval]
        if len(metric_list) < 10:  # pad so that every rank reduces the same number of values
            for i in range(10 - len(metric_list)):
                key_list.append(f"dummy_{i}")
                metric_list.append(0.0)
        metric_list = torch.tensor(metric_list, dtype=torch.float).to(self.accelerator.device)
        metric_list = self.accelerator.reduce(metric_list, "mean").tolist()
        for key, metric in zip(key_list, metric_list):
            if not key.startswith("dummy_"):
                logs[key] = metric
        return Trainer.log(self, logs, *args, **kwargs)

    def _mean_across_ranks(self, tensor):
        tensor = tensor.detach().clone()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor / dist.get_world_size()
