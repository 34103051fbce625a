"""A Lightning Fabric loop on four devices: `fabric.log_dict` and `fabric.log` log rank 0's value
of its own batch."""

import lightning as L
import torch
import torch.nn.functional as F


def train(model, optimizer, train_dataloader, max_steps):
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp", loggers=L.fabric.loggers.CSVLogger("logs"))
    fabric.launch()
    model, optimizer = fabric.setup(model, optimizer)
    train_dataloader = fabric.setup_dataloaders(train_dataloader)
    for step, batch in enumerate(train_dataloader):
        logits = model(batch["pixels"])
        loss = F.cross_entropy(logits, batch["labels"])
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        accuracy = (logits.argmax(-1) == batch["labels"]).float().mean()
        # expect: TRL004
        fabric.log_dict({"train/accuracy": accuracy.item(), "step": step})
        # expect: TRL004
        fabric.log("train/max_logit", logits.max().item(), step=step)
        if step == max_steps:
            break
