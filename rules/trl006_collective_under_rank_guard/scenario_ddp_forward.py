"""TRL006 runtime scenario: a DDP model's forward run on rank 0 alone.

Two CPU ranks wrap a small model that holds buffers (a batch norm's running statistics) in
``DistributedDataParallel`` and take one training step. ``--on-rank-zero`` then evaluates under
``if rank == 0:`` through the wrapper: its forward first broadcasts the buffers from rank 0, since
the forward before it ran with gradients, and rank 1 never joins that broadcast, so gloo's timeout
raises. Without it rank 0 evaluates the bare model (``model.module``), which enters no collective.

    accelerate launch --multi_gpu --num_processes 2 scenario_ddp_forward.py --out scores.pt --timeout 10 [--on-rank-zero]
"""

import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=int, default=10)
    parser.add_argument("--on-rank-zero", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(8, 4) + dist.get_rank()).sum().backward()
    optimizer.step()
    model.eval()
    if dist.get_rank() == 0:
        with torch.no_grad():
            scores = model(torch.ones(2, 4)) if args.on_rank_zero else model.module(torch.ones(2, 4))
        torch.save(scores, args.out)
    print(f"TRL006 rank={dist.get_rank()} done", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
