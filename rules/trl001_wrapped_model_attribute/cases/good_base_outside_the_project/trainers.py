from transformers import Trainer

from callbacks import VocabSizeCallback
from missing_module import MissingBase


class TokenCountingTrainer(Trainer):
    """transformers' Trainer keeps self.model unwrapped (the wrapper is self.model_wrapped)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(VocabSizeCallback())

    def log(self, logs, start_time=None):
        logs["vocab_size"] = self.model.config.vocab_size
        super().log(logs, start_time)


class FromMissingModule(MissingBase):
    def sample(self, input_ids):
        return self.model.generate(input_ids, max_new_tokens=16)
