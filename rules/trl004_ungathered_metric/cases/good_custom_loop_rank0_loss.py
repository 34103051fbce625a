# A custom loop logging its training loss from rank 0 as is: rank 0's sample of the run's loss,
# reported only where a launch of several processes is shown (nothing here shows one: a bare
# Accelerator() also runs as one process), or with `report-rank0-loss = true`.
import math

from accelerate import Accelerator
from torch.utils.tensorboard import SummaryWriter


def train(model, optimizer, scheduler, train_dataloader, args):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model, optimizer, train_dataloader, scheduler = accelerator.prepare(model, optimizer, train_dataloader, scheduler)
    writer = SummaryWriter(args.output_dir) if accelerator.is_main_process else None
    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                completed_steps += 1
                accelerator.log(
                    {"train_loss": loss.detach().float().item(), "lr": scheduler.get_last_lr()[0]},
                    step=completed_steps,
                )
                if writer is not None:
                    writer.add_scalar("train/loss", loss.item(), completed_steps)
                    writer.add_scalar("train/perplexity", math.exp(outputs.loss.item()), completed_steps)
