# Per-step statistics kept in a buffer of the trainer's own name, averaged on each rank and logged.
from collections import defaultdict

from transformers import Trainer


class LengthStatsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stats = defaultdict(list)

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        # expect: TRL004
        self.stats["train/completion_length"].append(self.accelerator.gather(
            inputs["completion_mask"].sum(1).float().mean()
        ).mean().item())
        return loss

    def log(self, logs, start_time=None):
        logs.update({key: sum(values) / len(values) for key, values in self.stats.items()})
        self.stats.clear()
        super().log(logs, start_time)
