"""Logits gathered the ways that keep every rank's shape equal: a per-rank reduction, a pad
across processes first, a per-sequence value."""

import torch
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator()


def forward(model, batch):
    outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    return outputs.logits, outputs.loss


def batch_metrics(model, batch):
    logits, loss = forward(model, batch)
    # One scalar per rank: every rank gathers the same shape.
    mean_logits = accelerator.gather_for_metrics(logits.detach().mean())
    padded = accelerator.pad_across_processes(logits, dim=1, pad_index=0)
    all_logits = accelerator.gather(padded)
    last_token = accelerator.gather(logits[:, -1, :].argmax(-1))
    return {"logits": mean_logits.mean().item(), "loss": accelerator.gather(loss).mean().item()}, all_logits, last_token


def token_entropy(model, batch):
    logits, _ = forward(model, batch)
    entropy = -(F.softmax(logits, dim=-1) * F.log_softmax(logits, dim=-1)).sum(-1).mean()
    return accelerator.gather_for_metrics(entropy).mean()


def collect(model, batch, accumulated):
    with torch.no_grad():
        logits, _ = forward(model, batch)
    accumulated.append(logits.float().mean(dim=(1, 2)))
    return accelerator.gather_for_metrics(torch.cat(accumulated))


def reward_step(reward_model, batch):
    # A reward head's logits, [batch, 1]: the same shape on every rank.
    outputs = reward_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    return accelerator.gather(outputs.logits)
