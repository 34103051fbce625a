"""An RL trainer base: it builds the policy and samples from it; each algorithm's subclass
prepares the policy with accelerate when it starts learning."""

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer


class RLTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator(log_with="wandb")
        self.model = AutoModelForCausalLM.from_pretrained(config.model_path)
        self.tokenizer = AutoTokenizer.from_pretrained(config.model_path)
        # __init__ runs before any subclass prepares the model: its config is its own here
        self.max_length = self.model.config.max_position_embeddings

    @torch.no_grad()
    def act(self, prompts):
        inputs = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.accelerator.device)
        # expect: TRL001
        samples = self.accelerator.unwrap_model(self.model).generate(**inputs, max_new_tokens=self.config.gen_size)
        return self.tokenizer.batch_decode(samples[:, inputs.input_ids.shape[1] :], skip_special_tokens=True)

    def learn(self):
        raise NotImplementedError
