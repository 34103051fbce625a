"""A vision-language training script validates on the master process alone, through the DDP
wrapper: DDP's forward first broadcasts the model's buffers (its rotary frequencies) from rank 0,
a collective the other ranks, back in the training loop, never enter."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def is_master():
    return dist.get_rank() == 0


def wrap_model(model):
    return DistributedDataParallel(model, device_ids=[dist.get_rank()])


def train(model, optimizer, train_loader, val_loader, device, eval_every):
    dist.init_process_group("nccl")
    model = wrap_model(model.to(device))
    for step, batch in enumerate(train_loader):
        _, loss = model(batch["input_ids"].to(device), targets=batch["labels"].to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % eval_every == 0 and is_master():
            model.eval()
            total = 0.0
            with torch.no_grad():
                for val_batch in val_loader:
                    # expect: TRL006
                    _, val_loss = model(val_batch["input_ids"].to(device), targets=val_batch["labels"].to(device))
                    total += val_loss.item()
            print(f"step {step}: val loss {total / len(val_loader):.4f}")
            model.train()
