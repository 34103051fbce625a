"""The near miss of good_resume_skip_through_a_main_process_bar.py: the loop skips a batch too long
for this rank (its own data): the ranks that skip miss the barrier the others wait in, whatever
bar the main process shows."""

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
            if batch["input_ids"].shape[1] > args.max_length:
                continue
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            global_step += 1
            if global_step % args.save_steps == 0:
                # expect: TRL006
                accelerator.wait_for_everyone()
                # expect: TRL006
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{epoch}-{global_step}"))
        start_step = 0
