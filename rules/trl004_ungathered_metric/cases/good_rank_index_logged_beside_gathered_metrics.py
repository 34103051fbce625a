# Rank 0 logs which process it is beside metrics gathered from every rank: the rank's own index
# says which rank wrote the line, and it holds none of the rank's data to gather.
import wandb
from accelerate import Accelerator


def train(model, optimizer, loader, steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    rank = accelerator.process_index
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        kl_mean = accelerator.gather(loss.detach()).mean()
        if accelerator.is_main_process:
            wandb.log(
                {
                    "train/kl_mean": kl_mean.item(),
                    "ddp/process_index": accelerator.process_index,
                    "ddp/local_process_index": accelerator.local_process_index,
                    "ddp/rank": rank,
                    "ddp/num_processes": accelerator.num_processes,
                },
                step=step,
            )
