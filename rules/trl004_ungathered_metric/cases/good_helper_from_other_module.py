# Values all-reduced by helpers of another module of the same project, and a loss divided by the
# global token count transformers passes in (num_items_in_batch, summed across ranks).
import torch
from accelerate import Accelerator
from transformers import Trainer

from utils.distributed import get_all_reduce_mean

from .metrics import all_reduce_sum


class TokenAveragedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        mask = inputs["labels"] != -100
        token_loss_sum = (outputs.per_token_loss * mask).sum()
        global_sum = self.accelerator.reduce(token_loss_sum.detach(), "sum")
        self.log({"token_loss": (global_sum / num_items_in_batch).item()})
        return token_loss_sum / num_items_in_batch


def evaluate(model, eval_dataloader, accelerator: Accelerator):
    for batch in eval_dataloader:
        logits = model(**batch).logits
        correct = (logits.argmax(-1) == batch["labels"]).float()
        accuracy = get_all_reduce_mean(correct.mean())
        hits = all_reduce_sum(correct.sum())
        accelerator.log({"eval/accuracy": accuracy.item(), "eval/hits": hits.item()})
