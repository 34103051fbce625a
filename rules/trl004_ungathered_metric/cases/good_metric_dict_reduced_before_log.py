# A policy-gradient inner loop: per-step statistics are collected in lists, averaged on each rank,
# then the whole dict is reduced across ranks (accelerator.reduce) before it is logged.
from collections import defaultdict

import torch
from accelerate import Accelerator


def train_epoch(model, optimizer, batches, compute_loss, global_step):
    accelerator = Accelerator(log_with="wandb")
    model, optimizer = accelerator.prepare(model, optimizer)
    info = defaultdict(list)
    for batch in batches:
        with accelerator.accumulate(model):
            loss, approx_kl, clipfrac = compute_loss(model, batch)
            info["approx_kl"].append(approx_kl)
            info["clipfrac"].append(clipfrac)
            info["loss"].append(loss)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            info = {k: torch.mean(torch.stack(v)) for k, v in info.items()}
            info = accelerator.reduce(info, reduction="mean")
            info.update({"step": global_step})
            accelerator.log(info, step=global_step)
            global_step += 1
            info = defaultdict(list)
    return global_step
