# A causal-LM loop on accelerate whose accuracy comes from a helper of the project's utils package:
# the helper computes on this rank's batch only, so the logged accuracy is rank 0's.
import math

from accelerate import Accelerator
from tqdm.auto import tqdm

from utils.metrics import mean_entropy, token_accuracy


def train(args, model, optimizer, lr_scheduler, train_dataloader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, log_with="wandb")
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    progress_bar = tqdm(range(args.num_train_epochs * num_update_steps_per_epoch))
    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            accuracy = token_accuracy(outputs.logits, batch["labels"])
            if accelerator.sync_gradients:
                progress_bar.update(1)
                completed_steps += 1
                accelerator.log(
                    {
                        # expect: TRL004
                        "train/token_accuracy": accelerator.gather(
                            accuracy.float()
                        ).mean().item(),
                        # expect: TRL004
                        "train/entropy": accelerator.gather(
                            mean_entropy(outputs.logits.detach()).float()
                        ).mean().item(),
                        "train/lr": lr_scheduler.get_last_lr()[0],
                        "epoch": epoch,
                    },
                    step=completed_steps,
                )
