"""The near miss of good_loss_groups_replaced_by_a_project_helper/: the loop replaces only the tensor
entries by their mean over the ranks and skips the rest, so the accuracy, a Python number, stays
this rank's own when rank 0 logs the dict."""
import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


def reduce_mean(t):
    t = t.clone()
    dist.all_reduce(t)
    return t / dist.get_world_size()


def train(model, loader, optimizer, criterion, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    for step, (images, targets) in enumerate(loader):
        outputs = model(images)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # expect: TRL004
        logs = {"loss": loss.detach(), "acc": (outputs.argmax(-1) == targets).float().mean().item()}
        for k, v in logs.items():
            if not torch.is_tensor(v):
                continue
            logs[k] = reduce_mean(v)
        if dist.get_rank() == 0:
            wandb.log(logs, step=step)
