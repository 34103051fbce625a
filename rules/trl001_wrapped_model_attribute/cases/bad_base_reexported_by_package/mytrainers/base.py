import torch
from accelerate import Accelerator


class BaseTrainer:
    """A small accelerate trainer: the model is prepared once, in __init__."""

    def __init__(self, model, optimizer, train_dataloader, gradient_accumulation_steps=1):
        self.accelerator = Accelerator(gradient_accumulation_steps=gradient_accumulation_steps)
        self.model, self.optimizer, self.train_dataloader = self.accelerator.prepare(
            model, optimizer, train_dataloader
        )
        self.global_step = 0

    def train(self, epochs):
        self.model.train()
        for _ in range(epochs):
            for batch in self.train_dataloader:
                with self.accelerator.accumulate(self.model):
                    loss = self.training_step(batch)
                    self.accelerator.backward(loss)
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.global_step += 1

    def training_step(self, batch):
        return self.model(**batch).loss

    @torch.no_grad()
    def save(self, output_dir):
        self.accelerator.wait_for_everyone()
        unwrapped = self.accelerator.unwrap_model(self.model)
        unwrapped.save_pretrained(output_dir, save_function=self.accelerator.save)
