"""Fabric pretraining whose validation loss is the run's: near misses of a helper evaluated over
a shard. The helper reduces before it returns; a loader kept whole on every rank
(`use_distributed_sampler=False`, or a flag the code does not spell); a loader built with no
sampler and no shuffle; a function of the file that happens to be named `setup_dataloaders`."""

import lightning as L
import torch
import torch.nn.functional as F
from lightning.fabric.strategies import FSDPStrategy
from torch.utils.data import DataLoader


@torch.no_grad()
def validate_reduced(fabric, model, val_dataloader):
    losses = []
    for val_data in val_dataloader:
        logits = model(val_data[:, :-1])
        losses.append(F.cross_entropy(logits.flatten(0, 1), val_data[:, 1:].flatten()))
    return fabric.all_reduce(torch.stack(losses).mean(), reduce_op="mean")


@torch.no_grad()
def validate(model, loader):
    total = 0.0
    for val_data in loader:
        logits = model(val_data[:, :-1])
        total += F.cross_entropy(logits.flatten(0, 1), val_data[:, 1:].flatten()).item()
    return total / len(loader)


def setup_dataloaders(dataset):
    return DataLoader(dataset, batch_size=8)


def main(fabric, config, model, train_set, val_set):
    train_dataloader = fabric.setup_dataloaders(DataLoader(train_set, batch_size=8, shuffle=True))
    # Every rank reads the whole validation set, in order.
    whole_val_dataloader = fabric.setup_dataloaders(DataLoader(val_set, batch_size=8), use_distributed_sampler=False)
    sharded_val_dataloader = fabric.setup_dataloaders(DataLoader(val_set, batch_size=8))
    model = fabric.setup(model)
    fabric.log_dict({"metric/val_loss": validate_reduced(fabric, model, sharded_val_dataloader).item()}, 0)
    fabric.log_dict({"metric/val_loss_whole": validate(model, whole_val_dataloader)}, 0)
    # The configuration decides whether Fabric shards it: not shown.
    flagged_val_dataloader = fabric.setup_dataloaders(DataLoader(val_set, batch_size=8), use_distributed_sampler=config.shard_val)
    fabric.log_dict({"metric/val_loss_flagged": validate(model, flagged_val_dataloader)}, 0)
    fabric.log_dict({"metric/val_loss_own_setup": validate(model, setup_dataloaders(val_set))}, 0)
    # A loader Fabric never set up: every rank reads the whole set.
    fabric.log_dict({"metric/train_loss_sample": validate(model, DataLoader(train_set, batch_size=8))}, 0)


def setup(config, model, train_set, val_set):
    fabric = L.Fabric(devices=config.devices, strategy=FSDPStrategy(), precision="bf16-mixed")
    fabric.launch(main, config, model, train_set, val_set)
