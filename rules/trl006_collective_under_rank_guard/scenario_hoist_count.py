"""TRL006 fix-safety scenario: a hoist that changes how many barriers a rank enters.

Rank 0 saves, then enters two barriers under two rank tests; the other ranks enter none, and the
job hangs. Hoisting only the second barrier (the first is not the first statement of its block,
so it has no fix) leaves rank 0 with two barriers and the others with one: the job still hangs.
That hoist is unsafe and says why; ``--fix`` leaves the file.

    accelerate launch --multi_gpu --num_processes 2 scenario_hoist_count.py --out saved.pt --timeout 10
"""

import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
from accelerate import Accelerator, InitProcessGroupKwargs


def save_then_sync(model, path, rank):
    if rank == 0:
        torch.save(model.state_dict(), path)
        dist.barrier()
    if rank == 0:
        dist.barrier()
        print("TRL006 saved", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=args.timeout))])
    model = accelerator.prepare(torch.nn.Linear(1, 1))
    save_then_sync(accelerator.unwrap_model(model), args.out, accelerator.process_index)
    accelerator.wait_for_everyone()
    print(f"TRL006 rank={accelerator.process_index} done", flush=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
