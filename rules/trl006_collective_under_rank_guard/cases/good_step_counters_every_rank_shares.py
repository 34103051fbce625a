"""A torchrun pretraining loop that resumes from a checkpoint: every rank loads the same file onto
its own device, so the step it resumes from, and every test on the step, is the same on every
rank; validation and the last step's metrics are collectives all ranks enter together."""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group(backend="nccl")
device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
torch.cuda.set_device(device)
model = torch.nn.Linear(768, 768).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
train_steps = int(os.environ.get("TRAIN_STEPS", "2900"))
val_interval = 125
extra_val_steps = {step for step in range(2000, train_steps + 1, 50)}


def load_checkpoint(path):
    checkpoint = torch.load(path, map_location=device, weights_only=False)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    step = int(checkpoint["step"])
    return step


def validation_loss(batches):
    loss = torch.zeros((), device=device)
    with torch.no_grad():
        for inputs, targets in batches:
            loss += torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    return loss / len(batches)


resume = os.environ.get("RESUME")
start_step = load_checkpoint(resume) if resume else 0
val_batches = [(torch.randn(8, 768), torch.randn(8, 768)) for _ in range(4)]
t0 = time.perf_counter()
for step in range(start_step, train_steps + 1):
    should_validate = step == train_steps or (step > 0 and step % val_interval == 0) or step in extra_val_steps
    if should_validate:
        dist.barrier()
        val = validation_loss(val_batches)
        if dist.get_rank() == 0:
            print(f"step {step} val_loss {val.item():.4f} time {time.perf_counter() - t0:.1f}s")
        dist.barrier()
    if step == train_steps:
        break
    inputs, targets = torch.randn(8, 768, device=device), torch.randn(8, 768, device=device)
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

dist.destroy_process_group()
