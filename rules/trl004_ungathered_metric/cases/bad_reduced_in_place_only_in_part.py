"""Only some of the logged tensors are reduced: the loop leaves one out, the helper reduces a copy."""
import torch
import torch.distributed as dist
import wandb


def reduce_copy(tensor):
    tensor = tensor.clone()
    dist.all_reduce(tensor)
    return None


@torch.no_grad()
def evaluate(model, loader, device, step):
    correct = torch.zeros((), device=device)
    total = torch.zeros((), device=device)
    for batch in loader:
        outputs = model(**batch)
        correct += (outputs.logits.argmax(-1) == batch["labels"]).sum()
        total += batch["labels"].numel()
    for tensor in (total,):
        dist.all_reduce(tensor)
    if dist.get_rank() == 0:
        # expect: TRL004
        wandb.log({"eval/correct": correct.item()}, step=step)


def train_step(model, batch, optimizer, step):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    logged = loss.detach()
    reduce_copy(logged)
    if dist.get_rank() == 0:
        # expect: TRL004
        wandb.log({"train/loss": logged.item()}, step=step)
