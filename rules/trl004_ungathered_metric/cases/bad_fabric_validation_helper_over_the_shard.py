"""Fabric pretraining: the validation helper averages the loss over this rank's shard of a loader
`setup_dataloaders` sharded, and rank 0's logger records it as the run's validation loss."""

import lightning as L
import torch
import torch.nn.functional as F
from lightning.fabric.loggers import CSVLogger
from lightning.fabric.strategies import FSDPStrategy


@torch.no_grad()
def validate(fabric, model, val_dataloader, eval_iters):
    model.eval()
    losses = torch.zeros(eval_iters, device=fabric.device)
    for k, val_data in enumerate(val_dataloader):
        if k >= eval_iters:
            break
        logits = model(val_data[:, :-1])
        losses[k] = F.cross_entropy(logits.flatten(0, 1), val_data[:, 1:].flatten()).item()
    model.train()
    return losses.mean()


def train(fabric, model, optimizer, train_dataloader, val_dataloader, config):
    for step, batch in enumerate(train_dataloader):
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % config.eval_interval == 0:
            val_loss = validate(fabric, model, val_dataloader, config.eval_iters)
            # expect: TRL004
            fabric.log_dict({"metric/val_loss": val_loss.item()}, step)


def main(fabric, config, model, train_dataloader, val_dataloader):
    train_dataloader, val_dataloader = fabric.setup_dataloaders(train_dataloader, val_dataloader)
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=config.lr))
    train(fabric, model, optimizer, train_dataloader, val_dataloader, config)


def setup(config, model, train_dataloader, val_dataloader):
    strategy = FSDPStrategy(sharding_strategy="SHARD_GRAD_OP") if config.devices > 1 else "auto"
    logger = CSVLogger("out", name="pretrain", flush_logs_every_n_steps=config.log_interval)
    fabric = L.Fabric(devices=config.devices, strategy=strategy, precision="bf16-mixed", loggers=logger)
    fabric.launch(main, config, model, train_dataloader, val_dataloader)
