"""Batches for GPT pretraining."""
import torch


def get_batch(data_iterator, eod_token):
    data = next(data_iterator)
    tokens = data["text"].long()[:, :-1].contiguous()
    labels = data["text"].long()[:, 1:].contiguous()
    loss_mask = (tokens != eod_token).float()
    return tokens, labels, loss_mask


def masked_token_mean(values, mask):
    return (values * mask).sum() / mask.sum()
