"""TRL004 scenario: the main process alone evaluates the validation loader, which a
``DistributedSampler`` cuts by rank, and logs the result as the run's validation loss.

    accelerate launch --multi_gpu --num_processes 2 scenario_shard_evaluated.py --data data.json --out logged.json

Rank 0 writes what it logged to ``--out``. ``--data`` is a JSON object ``{"x": [...], "y": [...]}``
(the runtime test writes it and computes the true numbers); the model is ``logit = x``, so the
validation loss depends on the data only. The rule offers no fix: the evaluation has to run on
every rank and be all-reduced.
"""

import argparse
import json

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, loader):
    total, count = 0.0, 0
    for inputs, targets in loader:
        logits = model(inputs).squeeze(-1)
        total += F.binary_cross_entropy_with_logits(logits, targets, reduction="sum").item()
        count += targets.numel()
    return total / count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", default="logged.json")
    args = parser.parse_args()

    accelerator = Accelerator()
    with open(args.data) as handle:
        data = json.load(handle)
    dataset = TensorDataset(torch.tensor(data["x"]).unsqueeze(-1), torch.tensor(data["y"], dtype=torch.float32))
    val_dataloader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset, shuffle=False))
    model = torch.nn.Linear(1, 1)
    torch.nn.init.ones_(model.weight)
    torch.nn.init.zeros_(model.bias)
    model = accelerator.prepare(model)

    logged = []
    if accelerator.is_main_process:
        val_loss = evaluate(accelerator.unwrap_model(model), val_dataloader)
        record = {"val/loss": val_loss}
        accelerator.log(record, step=0)
        logged.append(record)
        with open(args.out, "w") as handle:
            json.dump({"num_processes": accelerator.num_processes, "logged": logged}, handle)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
