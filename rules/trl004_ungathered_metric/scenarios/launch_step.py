"""What every fix-safety scenario shares: two ranks, each with its own batch, one logged step.

``python scenario.py --data data.json --out logged.json``: ``data.json`` holds one batch per rank
(``{"0": {...}, "1": {...}}``, lists turned into tensors); the scenario's ``log_step(accelerator,
batch)`` logs one step and returns what it logged, which rank 0 writes to ``--out``.
"""

import argparse
import json

import torch
from accelerate import Accelerator


def run(log_step) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    accelerator = Accelerator()
    with open(args.data) as handle:
        batch = {key: torch.tensor(value) for key, value in json.load(handle)[str(accelerator.process_index)].items()}
    logged = log_step(accelerator, batch)
    if accelerator.is_main_process:
        with open(args.out, "w") as handle:
            json.dump({"num_processes": accelerator.num_processes, "logged": logged}, handle)
    accelerator.wait_for_everyone()  # tear the gloo group down together
    accelerator.end_training()
