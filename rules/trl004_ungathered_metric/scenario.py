"""TRL004 runtime scenario: a training loop that logs this rank's accuracy and loss as the run's.

Each rank trains on its own shard of a small labelled set; the step's accuracy and loss are
reduced on each rank and logged, and rank 0 writes what it logged to ``--out``. With two ranks the
logged numbers describe half of the step's examples; after ``trllint --fix`` the per-rank tensors
are gathered first and the logged numbers are the whole step's.

    accelerate launch --multi_gpu --num_processes 2 scenario.py --data data.json --out logged.json

``--data`` is a JSON object ``{"x": [...], "y": [...]}`` (the runtime test writes it, so that it
can compute the true means itself); the model starts as ``logit = x`` so the first step's numbers
depend on the data only.
"""

import argparse
import json

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

PER_DEVICE_BATCH_SIZE = 4


def load_data(path):
    if path is None:
        return {"x": [2.0, 1.0, 0.5, 3.0, -1.0, 1.5, -2.0, 0.5], "y": [1, 1, 1, 1, 1, 0, 1, 0]}
    with open(path) as handle:
        return json.load(handle)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None)
    parser.add_argument("--out", default="logged.json")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    accelerator = Accelerator()
    data = load_data(args.data)
    features = torch.tensor(data["x"], dtype=torch.float32).unsqueeze(-1)
    labels = torch.tensor(data["y"], dtype=torch.float32)
    train_dataloader = DataLoader(TensorDataset(features, labels), batch_size=PER_DEVICE_BATCH_SIZE, shuffle=False)

    model = torch.nn.Linear(1, 1)
    torch.nn.init.ones_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

    logged = []
    step = 0
    for epoch in range(args.epochs):
        for batch in train_dataloader:
            inputs, targets = batch
            logits = model(inputs).squeeze(-1)
            loss = F.binary_cross_entropy_with_logits(logits, targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()

            correct = ((logits.detach() > 0).float() == targets).float()
            metrics = {"train/accuracy": correct.mean().item(), "train/loss": loss.item(), "epoch": epoch}
            accelerator.log(metrics, step=step)
            logged.append({"step": step, **metrics})
            step += 1

    if accelerator.is_main_process:
        with open(args.out, "w") as handle:
            json.dump({"num_processes": accelerator.num_processes, "logged": logged}, handle)
    # Both ranks tear the gloo group down together: rank 1 leaving while rank 0 still writes was
    # seen to abort it ("terminate called without an active exception").
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
