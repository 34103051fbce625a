"""A nanoGPT-style loop resumed from a checkpoint every rank loads onto its own device: the step
it restores is the same on every rank (where a value is placed is not what it holds), and the
checkpoint the loop later writes on rank 0 (with rank 0's loss) is not the one the step was read
from. Every rank
takes `if iter_num == 0 and eval_only: break` alike, so each meets the barrier after it."""

import os

import torch
import torch.distributed as dist
from torch.distributed import init_process_group
from torch.utils.data import DataLoader, DistributedSampler

out_dir = "out"
eval_only = False
init_from = "resume"
max_iters = 600000

init_process_group(backend="nccl")
ddp_rank = int(os.environ["RANK"])
ddp_local_rank = int(os.environ["LOCAL_RANK"])
device = f"cuda:{ddp_local_rank}"
master_process = ddp_rank == 0

iter_num = 0
if init_from == "resume":
    checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
    iter_num = checkpoint["iter_num"]
model = torch.nn.Linear(8, 8).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
dataset = torch.randn(4096, 8)
batches = iter(DataLoader(dataset, sampler=DistributedSampler(dataset), batch_size=8))

while True:
    loss = model(next(batches).to(device)).pow(2).mean()
    if iter_num % 2000 == 0 and master_process:
        checkpoint = {"model": model.state_dict(), "iter_num": iter_num, "loss": loss.item()}
        torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    if iter_num == 0 and eval_only:
        break
    dist.barrier()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    iter_num += 1
    if iter_num > max_iters:
        break
