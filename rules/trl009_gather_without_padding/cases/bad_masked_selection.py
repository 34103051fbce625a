"""A quantile over the tokens every rank kept (TRL's entropy masking before its fix, trl#3933):
each rank selects as many tokens as its mask holds."""

import torch
from transformers import Trainer


class EntropyMaskingTrainer(Trainer):
    def get_high_entropy_mask(self, entropies, mask, threshold):
        # expect: TRL009
        all_entropies = self.accelerator.gather(entropies[mask.bool()].float())
        cutoff = torch.quantile(all_entropies, threshold)
        return (entropies >= cutoff) & mask.bool()

    def log_valid_logits(self, logits, labels):
        valid = labels != -100
        # expect: TRL009
        kept = self.accelerator.gather_for_metrics(torch.masked_select(logits.argmax(-1), valid))
        self.log({"valid_tokens": kept.numel()})
