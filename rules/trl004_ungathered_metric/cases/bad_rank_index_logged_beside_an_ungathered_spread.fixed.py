# The near miss of good_rank_index_logged_beside_gathered_metrics.py: the rank's index is logged
# beside a spread computed from this rank's shard alone, which describes one rank's data, and
# beside a value named `rank` that is no process's rank: the effective rank of this rank's features.
import torch
import wandb
from accelerate import Accelerator


def train(model, optimizer, loader, steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        per_token_kl = model(**batch).loss
        accelerator.backward(per_token_kl.mean())
        optimizer.step()
        optimizer.zero_grad()
        kl_std = per_token_kl.detach().std()
        rank = torch.linalg.matrix_rank(batch["features"]).float().mean()
        if accelerator.is_main_process:
            wandb.log(
                {
                    # expect: TRL004
                    "train/kl_std": accelerator.gather(kl_std).mean().item(),
                    "ddp/process_index": accelerator.process_index,
                    # expect: TRL004
                    "train/effective_rank": accelerator.gather(rank).mean().item(),
                },
                step=step,
            )
