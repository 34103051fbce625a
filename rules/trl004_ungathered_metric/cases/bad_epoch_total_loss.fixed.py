# trllint-settings: {"report-rank0-loss": true}
# The epoch loss summed on each rank and logged from the main process: half the data on two GPUs.
import torch
from accelerate import Accelerator

accelerator = Accelerator(log_with="tensorboard", project_dir="runs")


def train_epoch(model, optimizer, train_dataloader, epoch):
    model.train()
    total_loss = 0
    for batch in train_dataloader:
        loss = model(**batch).loss
        total_loss += loss.detach().float()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    accelerator.log(
        {
            # expect: TRL004
            "train_loss": accelerator.gather(
                total_loss
            ).mean().item() / len(train_dataloader),
            "epoch": epoch,
        },
        step=epoch,
    )
