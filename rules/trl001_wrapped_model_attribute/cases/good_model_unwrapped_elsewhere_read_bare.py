"""The near misses of bad_member_read_on_a_model_unwrapped_elsewhere.py: the class unwraps
``self.model`` to save it, and every other read is one a DDP wrapper answers, one made on the
unwrapped model, one in ``__init__`` (before anything wraps it), or one on a model the method
binds itself."""

import torch
from accelerate import Accelerator


class RLTrainer:
    def __init__(self, model, tokenizer):
        self.accelerator = Accelerator(log_with="wandb")
        self.model = model
        self.model.config.pad_token_id = tokenizer.pad_token_id
        self.tokenizer = tokenizer

    def save(self, directory):
        self.accelerator.wait_for_everyone()
        state_dict = self.accelerator.get_state_dict(self.model)
        self.accelerator.unwrap_model(self.model).save_pretrained(directory, state_dict=state_dict)

    @torch.no_grad()
    def rollout(self, prompts):
        self.model.eval()
        sequences = self.accelerator.unwrap_model(self.model).generate(**prompts, max_new_tokens=64)
        self.model.train()
        return sequences, sum(p.numel() for p in self.model.parameters())

    def reset(self, model_class, path):
        self.model = model_class.from_pretrained(path)
        self.model.gradient_checkpointing_enable()
