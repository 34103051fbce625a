"""An SFT loop under accelerate that shows a progress bar on the main process only and, on resume,
skips the steps the checkpoint already holds. The bar wraps the same enumerate(loader) the other
ranks iterate bare, so the step index, and the skip, are the same on every rank."""

import os

import torch
from accelerate import Accelerator
from tqdm import tqdm


def train(model, optimizer, train_dataloader, args):
    accelerator = Accelerator(gradient_accumulation_steps=args.grad_accum)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    start_epoch, start_step, global_step = 0, 0, 0
    if args.checkpoint_path:
        accelerator.load_state(args.checkpoint_path)
        state = torch.load(os.path.join(args.checkpoint_path, "training_state.pt"))
        start_epoch, start_step, global_step = state["epoch"], state["step"] + 1, state["global_step"]
    for epoch in range(start_epoch, args.n_epochs):
        iterator = tqdm(enumerate(train_dataloader), total=len(train_dataloader)) if accelerator.is_main_process else enumerate(train_dataloader)
        for batch_cnt, batch in iterator:
            if epoch == start_epoch and batch_cnt < start_step:
                continue
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            global_step += 1
            if global_step % args.save_steps == 0:
                accelerator.wait_for_everyone()
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{epoch}-{global_step}"))
        start_step = 0
