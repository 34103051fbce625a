"""An RL trainer base class: a subclass prepares ``self.model`` with accelerate, and this class
unwraps it to save it, yet generates through it directly. Under a multi-GPU launch the model is
a DDP wrapper, which forwards neither ``generate`` nor the model's own ``sample`` method."""

import torch
from accelerate import Accelerator


class RLTrainer:
    def __init__(self, model, tokenizer):
        self.accelerator = Accelerator(log_with="wandb")
        self.model = model
        self.tokenizer = tokenizer

    def save(self, directory):
        self.accelerator.wait_for_everyone()
        state_dict = self.accelerator.get_state_dict(self.model)
        self.accelerator.unwrap_model(self.model).save_pretrained(directory, state_dict=state_dict)

    @torch.no_grad()
    def rollout(self, prompts):
        self.model.eval()
        # expect: TRL001
        sequences = self.model.generate(**prompts, max_new_tokens=64, do_sample=True)
        # expect: TRL001
        values = self.model.sample(sequences)
        self.model.train()
        return sequences, values
