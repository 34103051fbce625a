"""An accelerate fine-tuning loop whose exits test counters every rank advances in the same
statements (the step, the epoch, a flag set from them): every rank leaves on the same turn, so
the gather and the barrier after them are entered by all ranks or by none."""

import math

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed


def train(args, model, optimizer, train_dataloader, eval_dataloader, lr_scheduler):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    set_seed(args.seed)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    global_step = 0
    train_steps = 0
    finished_training = False
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                train_steps += 1
            if train_steps >= args.max_training_steps:
                break
            if global_step >= max_train_steps:
                finished_training = True
                break
        accelerator.wait_for_everyone()
        if finished_training:
            break
        model.eval()
        losses = []
        for batch in eval_dataloader:
            with torch.no_grad():
                outputs = model(**batch)
            losses.append(accelerator.gather_for_metrics(outputs.loss.repeat(args.per_device_eval_batch_size)))
        eval_loss = torch.cat(losses).mean()
        accelerator.print(f"epoch {epoch}: eval_loss {eval_loss.item():.4f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()
