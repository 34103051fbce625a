"""Numbers that are no rank's slice of the data: step counters and sizes named like the batch,
speeds over wall-clock time, and norms of the weights every DDP rank holds alike."""
import time

import torch
import torch.distributed as dist
import wandb


def log_progress(batch_idx: int, batch_size, num_batches, epoch: int):
    if dist.get_rank() == 0:
        wandb.log({"progress/batch": batch_idx, "progress/batch_size": batch_size, "progress/epoch": epoch,
                   "progress/fraction": batch_idx / num_batches})


def train(model, loader, optimizer, max_grad_norm):
    start = time.perf_counter()
    tokens_seen = 0
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        # after backward, DDP has all-reduced the gradients: this norm is the same on every rank
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
        tokens_seen += batch["attention_mask"].sum().item()
        elapsed = time.perf_counter() - start
        weight_norm = torch.sqrt(sum(p.detach().float().pow(2).sum() for p in model.parameters()))
        if dist.get_rank() == 0:
            wandb.log({
                "perf/tokens_per_second_per_device": tokens_seen / elapsed,
                "perf/minutes": elapsed / 60,
                "train/grad_norm": grad_norm.item(),
                "train/weight_norm": weight_norm.item(),
            })
