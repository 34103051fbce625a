"""Metrics computed on this process's batch."""
import torch.nn.functional as F


def token_accuracy(logits, labels, ignore_index=-100):
    mask = labels != ignore_index
    correct = (logits.argmax(dim=-1) == labels) & mask
    return correct.sum().float() / mask.sum().clamp(min=1)


def mean_entropy(logits):
    logp = F.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(dim=-1).mean()
