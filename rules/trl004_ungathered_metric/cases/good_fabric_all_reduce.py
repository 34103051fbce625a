"""The near miss of bad_fabric_log_dict.py: the accuracy is averaged across the processes with
`fabric.all_reduce` before it is logged, and the step count is no data."""

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
        accuracy = fabric.all_reduce((logits.argmax(-1) == batch["labels"]).float().mean(), reduce_op="mean")
        fabric.log_dict({"train/accuracy": accuracy.item(), "step": step})
        if step == max_steps:
            break
