# A single-process script (no accelerate, no torch.distributed, no Trainer): its loss is the loss.
import torch
import wandb


def train(model, optimizer, loader):
    for step, batch in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        wandb.log({"loss": loss.item(), "step": step})
