"""Each rank decides from its own batch whether to leave: the others wait at the barrier."""
import torch
import torch.distributed as dist


def train_steps(model, loader, optimizer, local_rank):
    batches = iter(loader)
    while True:
        batch = next(batches, None)
        if batch is None:
            break
        loss = model(**batch).loss
        diverged = torch.tensor(float(loss.isnan()), device=f"cuda:{local_rank}")
        if diverged.item():
            continue
        loss.backward()
        # expect: TRL006
        dist.barrier()
