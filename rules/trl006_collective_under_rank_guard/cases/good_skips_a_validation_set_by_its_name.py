"""A potential trainer that evaluates each validation set in turn, skipping those a command-line
list names. The loop visits the names of a dict of loaders (sorted by a key), the same names on
every rank, so every rank skips the same sets and meets the barrier after each one it evaluates."""

import logging

import torch
import torch.distributed as dist


def evaluate(model, loader, device):
    total, count = torch.zeros((), device=device), torch.zeros((), device=device)
    for batch in loader:
        total += model(batch["positions"].to(device)).pow(2).sum()
        count += batch["positions"].shape[0]
    dist.all_reduce(total)
    dist.all_reduce(count)
    return (total / count).item()


def evaluate_all(model, all_data_loaders, skip_heads, device, distributed):
    results = {}
    for name in sorted(all_data_loaders, key=lambda head: (head != "default", head)):
        if any(skip_head in name for skip_head in skip_heads):
            logging.info(f"Skipping evaluation of {name}")
            continue
        results[name] = evaluate(model, all_data_loaders[name], device)
        if distributed:
            dist.barrier()
    return results
