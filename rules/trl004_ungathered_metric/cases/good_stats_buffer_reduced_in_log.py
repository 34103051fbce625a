# The same buffer of the trainer's own name, reduced across ranks in log() before it is logged.
from collections import defaultdict

import torch
from transformers import Trainer


class ReducedLengthStatsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stats = defaultdict(list)

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        self.stats["train/completion_length"].append(inputs["completion_mask"].sum(1).float().mean().item())
        return loss

    def log(self, logs, start_time=None):
        device = self.accelerator.device
        logs.update(
            {
                key: self.accelerator.reduce(torch.tensor(values, device=device).mean(), reduction="mean").item()
                for key, values in self.stats.items()
            }
        )
        self.stats.clear()
        super().log(logs, start_time)
