import torch.distributed as dist
import wandb

from trainer.comm import all_reduce_mean


def train(model, loader, optimizer, step):
    for batch in loader:
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        accuracy = (outputs.logits.argmax(-1) == batch["labels"]).float().mean()
        all_reduce_mean(accuracy)
        if dist.get_rank() == 0:
            # expect: TRL004
            wandb.log({"train/accuracy": accuracy.item()}, step=step)
        step += 1
