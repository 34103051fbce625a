"""TRL006 runtime scenario: FSDP2 parameters assembled on rank 0 alone.

Two CPU ranks shard a two-layer model with ``fully_shard`` and take one step; each parameter is
then a DTensor holding this rank's shard. ``--on-rank-zero`` builds the full state dict under
``if rank == 0:``: ``full_tensor()`` all-gathers from every rank, so rank 0 waits for a rank that
never comes and gloo's timeout raises. Without it every rank assembles the tensors and rank 0
alone writes them (the near miss trllint leaves alone).

    accelerate launch --multi_gpu --num_processes 2 scenario_full_tensor.py --out saved.pt --timeout 10 [--on-rank-zero]
"""

import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard


def full_state_on_rank_zero(model, path):
    if dist.get_rank() == 0:
        state = {name: tensor.full_tensor() for name, tensor in model.state_dict().items()}
        torch.save(state, path)


def full_state_from_every_rank(model, path):
    state = {name: tensor.full_tensor() for name, tensor in model.state_dict().items()}
    if dist.get_rank() == 0:
        torch.save(state, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=int, default=10)
    parser.add_argument("--on-rank-zero", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    save = full_state_on_rank_zero if args.on_rank_zero else full_state_from_every_rank
    save(model, args.out)
    print(f"TRL006 rank={dist.get_rank()} done", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
