"""TRL004 scenario: the loss is all-reduced into a copy for the console, and the per-rank loss
goes to the tracker.

    accelerate launch --multi_gpu --num_processes 2 scenario_reduced_copy.py --data data.json --out logged.json

Rank 0 writes what it logged to ``--out``. ``--data`` is a JSON object ``{"x": [...], "y": [...]}``
(the runtime test writes it and computes the true numbers); the model starts as ``logit = x``, so
the first step's loss depends on the data only. The fixed copy logs the copy the code reduced.
"""

import argparse
import json

import torch
import torch.distributed as dist
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", default="logged.json")
    args = parser.parse_args()

    accelerator = Accelerator()
    with open(args.data) as handle:
        data = json.load(handle)
    dataset = TensorDataset(torch.tensor(data["x"]).unsqueeze(-1), torch.tensor(data["y"], dtype=torch.float32))
    model = torch.nn.Linear(1, 1)
    torch.nn.init.ones_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, DataLoader(dataset, batch_size=4))

    logged = []
    for step, (inputs, targets) in enumerate(train_dataloader):
        loss = F.binary_cross_entropy_with_logits(model(inputs).squeeze(-1), targets)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        reduced_loss = loss.detach().clone()
        dist.all_reduce(reduced_loss)
        reduced_loss /= accelerator.num_processes
        if accelerator.is_main_process:
            print(f"step {step}: loss {reduced_loss.item():.4f}")
            record = {"train/loss": loss.item()}
            accelerator.log(record, step=step)
            logged.append(record)

    if accelerator.is_main_process:
        with open(args.out, "w") as handle:
            json.dump({"num_processes": accelerator.num_processes, "logged": logged}, handle)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
