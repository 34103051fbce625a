"""The near miss of good_resume_skip_every_rank_takes.py: the skip tests the length of this
rank's own batch, so a rank with a long batch skips the gather the others wait in."""

import torch
from accelerate import Accelerator

accelerator = Accelerator()


def train(args, model, optimizer, train_dataloader):
    for step, batch in enumerate(train_dataloader):
        if batch["input_ids"].shape[1] > args.max_length:
            continue
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        # expect: TRL006
        avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
        accelerator.log({"train_loss": avg_loss.item()}, step=step)
