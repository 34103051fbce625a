# The accelerator is created only after the warm-up loop logs: a fix naming it there would raise
# UnboundLocalError, so the finding comes without one.
import torch
import wandb
from accelerate import Accelerator


def train(model, optimizer, warmup_loader, train_loader, args):
    for batch in warmup_loader:
        logits = model(batch["input_ids"])
        correct = (logits.argmax(-1) == batch["labels"]).float()
        # expect: TRL004
        wandb.log({"warmup/accuracy": correct.mean().item()})

    accelerator = Accelerator(gradient_accumulation_steps=args.accumulation)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    for batch in train_loader:
        loss = torch.nn.functional.cross_entropy(model(batch["input_ids"]), batch["labels"])
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
