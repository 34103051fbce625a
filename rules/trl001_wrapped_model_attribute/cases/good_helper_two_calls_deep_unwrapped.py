# The helper chain receives the unwrapped model, or self.model, never the step's wrapper.
import torch
from transformers import Trainer


class SamplingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        unwrapped = self.accelerator.unwrap_model(model)
        inputs["input_ids"] = self._generate(unwrapped, inputs["prompt_ids"])
        return super().training_step(model, inputs, num_items_in_batch)

    def evaluate_samples(self, prompt_ids):
        return self._generate(self.model, prompt_ids)

    def _generate(self, model, prompt_ids):
        return self._sample(model, prompt_ids)

    def _sample(self, model, prompt_ids):
        with torch.no_grad():
            return model.generate(prompt_ids, max_new_tokens=8, pad_token_id=model.config.pad_token_id)
