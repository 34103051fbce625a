"""Close to a rate, but over steps rather than time, and a parameter that is the batch's rewards (a tensor, by its annotation)."""
import torch
import torch.distributed as dist
import wandb


def log_rewards(step, batch_rewards: torch.Tensor):
    if dist.get_rank() == 0:
        # expect: TRL004
        wandb.log({"train/reward": batch_rewards.mean().item()}, step=step)


def train(model, loader, optimizer):
    tokens_seen = torch.zeros((), device="cuda")
    for step, batch in enumerate(loader, start=1):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        tokens_seen += batch["attention_mask"].sum()
        if dist.get_rank() == 0:
            # expect: TRL004
            wandb.log({"data/tokens_per_step": (tokens_seen / step).item()})
