"""The near miss of bad_trainer_loss_stored_beside_gathered.py: the trainer stores this rank's
router loss for `log()` and gathers none of the values it stores, so nothing in the class shows
the loss is meant as more than rank 0's sample: a loss logged as is, reported only with
report-rank0-loss = true. The token count it keeps is gathered, but never stored for `log()`."""

from collections import defaultdict

import torch
from transformers import Trainer


class RouterLossTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
        self.tokens_seen = 0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if self.model.training else "eval"
        outputs = model(**inputs, output_router_logits=True)
        self.tokens_seen += self.accelerator.gather_for_metrics(inputs["attention_mask"].sum()).sum().item()
        with torch.no_grad():
            self._metrics[mode]["router_loss"].append(outputs.aux_loss.item())
        loss = outputs.loss
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        logs.update({key: sum(values) / len(values) for key, values in self._metrics[mode].items()})
        super().log(logs, start_time)
        self._metrics[mode].clear()
