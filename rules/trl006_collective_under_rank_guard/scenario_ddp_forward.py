"""TRL006 scenario: after training, rank 0 alone runs a validation batch through the DDP wrapper.

    accelerate launch --multi_gpu --num_processes 2 scenario_ddp_forward.py --out predictions.json --timeout 10

The model holds batch-norm buffers. DistributedDataParallel broadcasts them from rank 0 before a
forward (``broadcast_buffers=True``, the default), and still before the first forward under
``torch.no_grad()`` that follows a training step: rank 0 waits in that broadcast while rank 1
waits in the barrier, until the process group's timeout raises. Running the bare module
(``model.module(...)``) enters no collective. The rule offers no fix; its message says so.
"""

import argparse
import json
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="predictions.json")
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(dist.get_rank())
    for step in range(3):
        inputs = torch.randn(8, 2, generator=generator)
        loss = (model(inputs).squeeze(-1) - inputs.sum(-1)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    if dist.get_rank() == 0:
        model.eval()
        with torch.no_grad():
            predictions = model(torch.ones(4, 2))
        with open(args.out, "w") as handle:
            json.dump({"predictions": predictions.squeeze(-1).tolist()}, handle)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
