from accelerate import Accelerator


class Evaluator:
    def __init__(self, model, tokenizer):
        self.accelerator = Accelerator()
        self.tokenizer = tokenizer
        self.model = self.accelerator.prepare_model(model)

    def sample(self, prompts):
        batch = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.accelerator.device)
        # expect: TRL001
        settings = self.accelerator.unwrap_model(self.model).generation_config
        # expect: TRL001
        limit = self.accelerator.unwrap_model(self.model).config.max_position_embeddings
        return settings.max_new_tokens, limit, batch
