"""The near miss of good_loop_exits_on_a_step_resumed_from_a_checkpoint.py: each rank resumes
from its own shard's checkpoint, whose step it reads, so one rank may leave the loop at once
while the others wait for it in the barrier."""

import os
import sys

import torch
import torch.distributed as dist
from torch.distributed import init_process_group

out_dir = "out"
eval_only = "--eval_only" in sys.argv

init_process_group(backend="nccl")
ddp_rank = int(os.environ["RANK"])
device = f"cuda:{int(os.environ['LOCAL_RANK'])}"

checkpoint = torch.load(os.path.join(out_dir, f"ckpt_rank{ddp_rank}.pt"), map_location=device)
iter_num = checkpoint["iter_num"]
while True:
    if iter_num == 0 and eval_only:
        break
    # expect: TRL006
    dist.barrier()
    iter_num += 1
