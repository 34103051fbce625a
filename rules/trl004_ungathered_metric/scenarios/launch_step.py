"""What every fix-safety scenario shares: two ranks, each with its own batch, one logged step.

``python scenario.py --data data.json --out logged.json``: ``data.json`` holds one batch per rank
(``{"0": {...}, "1": {...}}``, lists turned into tensors); the scenario's ``log_step(accelerator,
batch)`` logs one step and returns what it logged, which rank 0 writes to ``--out``.
"""

import argparse
import json
import os

import torch
from accelerate import Accelerator


class MovedToCpu(torch.Tensor):
    """A tensor that a ``.cpu()`` made, or computed from one: tensor subclasses survive torch's
    operations, so a gather can tell whether its argument went through the CPU."""


def track_cpu_moves(accelerator: Accelerator) -> list[bool]:
    """With ``TRLLINT_TRACK_CPU_MOVES=1``: for each ``accelerator.gather``, whether its argument
    came through ``.cpu()`` (NCCL would refuse it). On a CPU-only machine every tensor is on the
    CPU, so the device cannot tell; the path the value took can."""
    seen: list[bool] = []
    real_cpu, real_gather = torch.Tensor.cpu, accelerator.gather

    def cpu(self, *args, **kwargs):
        return real_cpu(self, *args, **kwargs).as_subclass(MovedToCpu)

    def gather(tensor):
        moved = isinstance(tensor, MovedToCpu)
        seen.append(moved)
        return real_gather(tensor.as_subclass(torch.Tensor) if moved else tensor)

    torch.Tensor.cpu = cpu
    accelerator.gather = gather
    return seen


def run(log_step) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    accelerator = Accelerator()
    with open(args.data) as handle:
        rank_batch = json.load(handle)[str(accelerator.process_index)]
    # On the rank's device, as a prepared DataLoader hands it: a GPU tensor under NCCL.
    batch = {key: torch.tensor(value, device=accelerator.device) for key, value in rank_batch.items()}
    gathered_from_cpu = track_cpu_moves(accelerator) if os.environ.get("TRLLINT_TRACK_CPU_MOVES") == "1" else None
    logged = log_step(accelerator, batch)
    if accelerator.is_main_process:
        record = {"num_processes": accelerator.num_processes, "logged": logged}
        if gathered_from_cpu is not None:
            record["gathered_from_cpu"] = gathered_from_cpu
        with open(args.out, "w") as handle:
            json.dump(record, handle)
    accelerator.wait_for_everyone()  # tear the gloo group down together
    accelerator.end_training()
