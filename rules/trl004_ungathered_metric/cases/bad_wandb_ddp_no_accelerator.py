# torch.distributed without accelerate: no accelerator to gather with, so no automatic fix. The
# rank-0 loss is reported only on opt-in (report-rank0-loss); the accuracy always.
import torch
import torch.distributed as dist
import wandb


def train(model, optimizer, loader, rank):
    for step, (images, labels) in enumerate(loader):
        logits = model(images)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        correct = logits.argmax(-1) == labels
        if dist.get_rank() == 0:
            wandb.log(
                {
                    "train/loss": loss.item(),
                    # expect: TRL004
                    "train/accuracy": correct.float().mean().item(),
                    "train/step": step,
                }
            )
