"""The near miss of good_skips_a_validation_set_by_its_name.py: the skip tests a batch of the set,
this rank's shard of it, so a rank whose first batch is empty skips the set and the barrier the
other ranks wait in."""

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
    for name, loader in sorted(all_data_loaders.items()):
        first = next(iter(loader))
        if first["positions"].shape[0] == 0:
            logging.info(f"Skipping evaluation of {name}: no structures on this rank")
            continue
        # expect: TRL006
        results[name] = evaluate(model, loader, device)
        if distributed:
            # expect: TRL006
            dist.barrier()
    return results
