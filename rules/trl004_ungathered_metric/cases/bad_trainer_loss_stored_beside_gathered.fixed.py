"""A mixture-of-experts SFT trainer stores its metrics for `log()`, which averages each list and
logs it from the main process. It gathers the token accuracy and the entropy across processes
before storing them, but stores this rank's router loss as is: the one metric of the buffer that
describes one rank's batch. Its gathered neighbours show it is a metric like them, not the loss
rank 0 logs by habit."""

from collections import defaultdict

import torch
from transformers import Trainer


class MoESFTTrainer(Trainer):
    def __init__(self, *args, router_aux_loss_coef=0.001, **kwargs):
        super().__init__(*args, **kwargs)
        self.router_aux_loss_coef = router_aux_loss_coef
        self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if self.model.training else "eval"
        labels = inputs["labels"]
        (loss, outputs) = super().compute_loss(
            model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch
        )
        with torch.no_grad():
            probs = torch.softmax(outputs.logits.float(), dim=-1)
            entropy = -(probs * torch.log(probs + 1e-9)).sum(-1).mean()
            self._metrics[mode]["entropy"].append(self.accelerator.gather_for_metrics(entropy).mean().item())

            predictions = outputs.logits[..., :-1, :].argmax(dim=-1)
            targets = labels[..., 1:]
            mask = targets != -100
            correct = self.accelerator.gather_for_metrics(((predictions == targets) & mask).sum())
            total = self.accelerator.gather_for_metrics(mask.sum())
            self._metrics[mode]["mean_token_accuracy"].append((correct.sum() / total.sum()).item())

            router_loss = outputs.aux_loss
            # expect: TRL004
            self._metrics[mode]["router_loss"].append(self.accelerator.gather(
                router_loss
            ).mean().item())
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        metrics = {key: sum(values) / len(values) for key, values in self._metrics[mode].items()}
        if mode == "eval":
            metrics = {f"eval_{key}": value for key, value in metrics.items()}
        logs.update(metrics)
        super().log(logs, start_time)
        self._metrics[mode].clear()
