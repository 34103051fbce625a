"""Subclasses of trainers whose model is bare where it is read, or which no library prepares."""

import torch
from transformers import Trainer
from trl import PPOTrainer

from my_rl.trainers import PPOTrainer as LocalPPOTrainer


class UnwrappingPPOTrainer(PPOTrainer):
    def __init__(self, config, model, **kwargs):
        # Read on the model argument, before the base's __init__ prepares self.model.
        self.is_seq2seq = model.config.is_encoder_decoder
        super().__init__(config=config, model=model, **kwargs)

    def batched_forward_pass(self, model, queries, responses, model_inputs, return_logits=False, response_masks=None):
        unwrapped = self.accelerator.unwrap_model(model)
        logits, _, values = model(**model_inputs)
        if getattr(unwrapped.config, "model_type", None) == "chatglm":
            values = torch.transpose(values, 0, 1)
        return logits, None, values, model_inputs["attention_mask"]

    def save(self, output_dir):
        self.accelerator.unwrap_model(self.model).save_pretrained(output_dir)


class RewardTrainer(Trainer):
    def compute_metrics_prefix(self):
        # transformers' Trainer keeps self.model bare; model_wrapped is the wrapped one.
        return self.model.config.model_type


class ProjectPPOTrainer(LocalPPOTrainer):
    def batched_forward_pass(self, model, queries, responses, model_inputs):
        return model.config.vocab_size
