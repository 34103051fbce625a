import torch
from accelerate import Accelerator


class Evaluator:
    """Runs the model on one device: nothing here wraps it, only the dataloader is prepared."""

    def __init__(self, model, eval_dataloader):
        self.accelerator = Accelerator()
        self.model = model.to(self.accelerator.device).eval()
        self.eval_dataloader = self.accelerator.prepare(eval_dataloader)

    @torch.no_grad()
    def evaluate(self):
        losses = []
        for batch in self.eval_dataloader:
            losses.append(self.model(**batch).loss)
        return torch.stack(losses).mean()
