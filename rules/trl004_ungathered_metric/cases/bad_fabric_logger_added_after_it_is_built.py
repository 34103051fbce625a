"""Near miss of a Fabric built without loggers: its `loggers` is its own list, and the script
adds a CSV logger to it, so `log_dict` records rank 0's shard loss as the run's."""

import lightning as L
import torch
import torch.nn.functional as F
from lightning.fabric.loggers import CSVLogger


def train(fabric, model, optimizer, train_dataloader):
    for step, batch in enumerate(train_dataloader):
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        # expect: TRL004
        fabric.log_dict({"train/loss": loss.item()}, step)


def main(fabric, config, model, train_dataloader):
    train_dataloader = fabric.setup_dataloaders(train_dataloader)
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=config.lr))
    train(fabric, model, optimizer, train_dataloader)


def setup(config, model, train_dataloader):
    fabric = L.Fabric(devices=config.devices, strategy="ddp", precision="bf16-mixed", loggers=None)
    fabric.loggers.append(CSVLogger("out", name="pretrain"))
    fabric.launch(main, config, model, train_dataloader)
