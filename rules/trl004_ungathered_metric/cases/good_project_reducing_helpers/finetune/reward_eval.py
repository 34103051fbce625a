"""Reward-model evaluation on accelerate; the reduction comes from a sibling module (relative import)."""
import torch
from accelerate import Accelerator

from .dist_utils import get_all_reduce_mean


def evaluate_reward_model(model, eval_dataloader, accelerator: Accelerator, step):
    model.eval()
    correct_predictions, total_predictions, scores = 0, 0, 0.0
    for batch in eval_dataloader:
        with torch.no_grad():
            chosen = model(input_ids=batch["chosen_input_ids"], attention_mask=batch["chosen_attention_mask"]).logits
            rejected = model(input_ids=batch["rejected_input_ids"], attention_mask=batch["rejected_attention_mask"]).logits
        correct_predictions += (chosen > rejected).sum()
        total_predictions += chosen.shape[0]
        scores += chosen.float().mean()
    accuracy = get_all_reduce_mean(correct_predictions.float() / total_predictions)
    chosen_score = get_all_reduce_mean(scores / len(eval_dataloader))
    accelerator.log({"eval/reward_accuracy": accuracy.item(), "eval/chosen_score": chosen_score.item()}, step=step)
    return accuracy
