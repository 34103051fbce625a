# Accelerate trackers and a TensorBoard writer fed per-rank values.
import torch
from accelerate import Accelerator
from torch.utils.tensorboard import SummaryWriter


def main(model, optimizer, eval_dataloader):
    accelerator = Accelerator(log_with=["wandb"])
    writer = SummaryWriter("runs/eval")
    model, eval_dataloader = accelerator.prepare(model, eval_dataloader)
    for step, batch in enumerate(eval_dataloader):
        with torch.no_grad():
            logits = model(batch["input_ids"]).logits
        predictions = logits.argmax(dim=-1)
        accuracy = (predictions == batch["labels"]).float()
        # expect: TRL004
        accelerator.get_tracker("wandb").log({"eval/accuracy": accelerator.gather(
            accuracy.mean()
        ).mean().item()}, step=step)
        # expect: TRL004
        writer.add_scalar("eval/accuracy", accelerator.gather(
            accuracy.mean()
        ).mean().item(), step)
