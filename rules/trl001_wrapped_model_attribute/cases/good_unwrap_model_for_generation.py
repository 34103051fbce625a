# TRL's own idiom: generate on the model unwrapped (and, under ZeRO-3, gathered) for generation.
import torch
from transformers import Trainer
from trl.models.utils import unwrap_model_for_generation


class RolloutTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        with unwrap_model_for_generation(model, self.accelerator) as unwrapped_model:
            completions = unwrapped_model.generate(
                inputs["prompt_ids"], generation_config=unwrapped_model.generation_config
            )
        inputs["input_ids"] = completions
        return super().training_step(model, inputs, num_items_in_batch)
