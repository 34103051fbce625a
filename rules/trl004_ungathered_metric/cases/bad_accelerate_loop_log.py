# trllint-settings: {"report-rank0-loss": true}
# A plain accelerate training loop: each rank logs the loss of its own shard.
import torch
from accelerate import Accelerator


def train(model, optimizer, train_dataloader, num_epochs):
    accelerator = Accelerator(log_with="wandb")
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(num_epochs):
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            # expect: TRL004
            accelerator.log({"train_loss": loss.item(), "epoch": epoch, "step": step}, step=step)
