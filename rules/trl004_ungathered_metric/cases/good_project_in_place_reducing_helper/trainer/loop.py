"""The training loop logs what the project's helpers reduced in place (another module)."""
import torch
import torch.distributed as dist
import wandb

from trainer import comm
from trainer.comm import all_reduce_mean


def train(model, loader, optimizer, step):
    for batch in loader:
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        accuracy = (outputs.logits.argmax(-1) == batch["labels"]).float().mean()
        peak = batch["attention_mask"].sum(-1).max().float()
        all_reduce_mean(accuracy)
        comm.sync_max(peak)
        if dist.get_rank() == 0:
            wandb.log({"train/accuracy": accuracy.item(), "data/longest_sequence": peak.item()}, step=step)
        step += 1
