import torch

from .base import Evaluator


class GenerationEvaluator(Evaluator):
    @torch.no_grad()
    def sample(self, input_ids):
        pad_token_id = self.model.config.pad_token_id
        return self.model.generate(input_ids, pad_token_id=pad_token_id, max_new_tokens=64)
