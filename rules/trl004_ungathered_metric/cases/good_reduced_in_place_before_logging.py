"""Sums reduced in place across ranks before rank 0 logs them: a loop over the tensors, over a
dict's keys or values, or a helper of this file that all-reduces its argument."""
import torch
import torch.distributed as dist
import wandb


def all_reduce_mean(tensor):
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    tensor /= dist.get_world_size()


@torch.no_grad()
def evaluate(model, loader, device, step):
    correct = torch.zeros((), device=device)
    total = torch.zeros((), device=device)
    sums = {"loss": torch.zeros((), device=device), "tokens": torch.zeros((), device=device)}
    for batch in loader:
        outputs = model(**batch)
        correct += (outputs.logits.argmax(-1) == batch["labels"]).sum()
        total += batch["labels"].numel()
        sums["loss"] += outputs.loss.detach() * batch["attention_mask"].sum()
        sums["tokens"] += batch["attention_mask"].sum()
    for tensor in (correct, total):
        dist.all_reduce(tensor)
    for key in sums:
        dist.all_reduce(sums[key])
    if dist.get_rank() == 0:
        wandb.log({"eval/accuracy": (correct / total).item(), "eval/loss": (sums["loss"] / sums["tokens"]).item()}, step=step)


def train_step(model, batch, optimizer, step):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    logged = loss.detach().clone()
    all_reduce_mean(logged)
    if dist.get_rank() == 0:
        wandb.log({"train/loss": logged.item()}, step=step)
