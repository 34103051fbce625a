"""A diffusers-style loop resuming from a checkpoint: every rank loads the same checkpoint name,
so the epoch and the step it skips to are the same on every rank, and they all skip the same
batches before the gather."""

import os

import torch
from accelerate import Accelerator


def train(args, unet, optimizer, train_dataloader, lr_scheduler, num_update_steps_per_epoch):
    accelerator = Accelerator()
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, train_dataloader, lr_scheduler)
    global_step = 0
    first_epoch = 0
    resume_step = 0
    if args.resume_from_checkpoint:
        dirs = sorted(d for d in os.listdir(args.output_dir) if d.startswith("checkpoint"))
        path = dirs[-1]
        accelerator.load_state(os.path.join(args.output_dir, path))
        global_step = int(path.split("-")[1])
        first_epoch = global_step // num_update_steps_per_epoch
        resume_step = global_step % num_update_steps_per_epoch
    for epoch in range(first_epoch, args.num_train_epochs):
        unet.train()
        for step, batch in enumerate(train_dataloader):
            if args.resume_from_checkpoint and epoch == first_epoch and step < resume_step:
                continue
            loss = torch.nn.functional.mse_loss(unet(batch["pixel_values"]).sample, batch["target"])
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
            accelerator.log({"train_loss": avg_loss.item()}, step=global_step)
            global_step += 1
