import torch
from transformers import Trainer


class PackedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        logits = self._packed_logits(model, inputs)
        return logits.float().logsumexp(-1).mean()

    def _packed_logits(self, model, inputs):
        return self._forward_chunks(model, inputs["input_ids"], chunk=4)

    def _forward_chunks(self, model, input_ids, chunk):
        # expect: TRL001
        vocab_size = self.accelerator.unwrap_model(model).config.vocab_size
        pieces = [model(ids).logits[..., :vocab_size] for ids in input_ids.split(chunk)]
        return torch.cat(pieces)
