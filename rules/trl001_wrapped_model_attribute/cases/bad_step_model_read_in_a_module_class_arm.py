"""Near miss of a model-class arm: every wrapper is an `nn.Module`, and a wrapper class of the
project's own may be tested too, so these arms may still hold the wrapper."""

import torch
from transformers import Trainer


class ScaledLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        scale = 1.0
        if isinstance(model, torch.nn.Module):
            # expect: TRL001
            scale = model.base_model.config.hidden_size ** -0.5
        return outputs.loss * scale
