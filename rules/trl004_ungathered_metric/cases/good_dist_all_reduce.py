# torch.distributed: sums all-reduced in place before the division, then logged from rank 0.
import torch
import torch.distributed as dist
import wandb


def validate(model, loader, device):
    loss_sum = torch.zeros((), device=device)
    count = torch.zeros((), device=device)
    for inputs, labels in loader:
        logits = model(inputs.to(device))
        loss_sum += torch.nn.functional.cross_entropy(logits, labels.to(device), reduction="sum")
        count += labels.numel()
    dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
    dist.all_reduce(count, op=dist.ReduceOp.SUM)
    if dist.get_rank() == 0:
        wandb.log({"val/loss": (loss_sum / count).item()})
