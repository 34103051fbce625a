# Helpers written above the step that hands them the wrapped model, and a runner whose
# reading method comes before the __init__ that wraps self.model.
import torch
from transformers import Trainer


class RewardTrainer(Trainer):
    def _score_tokens(self, model, input_ids):
        # expect: TRL001
        return model.get_output_embeddings()(model(input_ids, output_hidden_states=True).hidden_states[-1])

    def _score(self, model, inputs):
        return self._score_tokens(model, inputs["input_ids"]).mean()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = -torch.nn.functional.logsigmoid(self._score(model, inputs))
        return (loss, None) if return_outputs else loss


class Runner:
    def describe(self):
        # expect: TRL001
        return self.model.name_or_path

    def __init__(self, accelerator, model):
        self.accelerator = accelerator
        self.model = accelerator.prepare(model)
