import torch
from accelerate import Accelerator
from transformers import Trainer


class GeneratingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        pad_token_id = self.accelerator.unwrap_model(model).config.pad_token_id
        unwrapped = self.accelerator.unwrap_model(model)
        with torch.no_grad():
            completions = unwrapped.generate(inputs["prompt_ids"], pad_token_id=pad_token_id, max_new_tokens=8)
        inputs["input_ids"] = completions
        return super().training_step(model, inputs, num_items_in_batch)


def finish(model, optimizer):
    accelerator = Accelerator()
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out", save_function=accelerator.save)
