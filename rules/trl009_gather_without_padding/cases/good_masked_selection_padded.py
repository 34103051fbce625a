"""TRL's fix for its entropy quantile (trl#3964): pad the selection with a sentinel, gather, drop it;
and selections that are no rank's data, or reduced before the gather."""

import torch
from transformers import Trainer


class EntropyMaskingTrainer(Trainer):
    def get_high_entropy_mask(self, entropies, mask, threshold):
        local = entropies[mask.bool()].float()
        pad_value = -1e9  # entropies are never negative
        padded = self.accelerator.pad_across_processes(local, dim=0, pad_index=pad_value)
        gathered = self.accelerator.gather(padded)
        gathered = gathered[gathered != pad_value]
        cutoff = torch.quantile(gathered, threshold)
        return (entropies >= cutoff) & mask.bool()

    def log_valid_tokens(self, logits, labels):
        valid = labels != -100
        count = self.accelerator.gather_for_metrics(valid.sum())
        total = self.accelerator.gather(logits.argmax(-1)[valid].sum())
        self.log({"valid_tokens": count.sum().item(), "argmax_sum": total.sum().item()})

    def positive_weights(self):
        weights = torch.ones(8)
        return self.accelerator.gather(weights[weights > 0])
