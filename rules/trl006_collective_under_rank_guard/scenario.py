"""TRL006 runtime scenario: rank 0 alone enters a collective at the end of training, and hangs.

Two ranks train a one-feature regression on their shards of a small set; at the end the main
process totals the examples every rank saw with ``accelerator.reduce`` and saves the model with
``accelerator.get_state_dict`` -- both under ``if accelerator.is_main_process:``. ``reduce`` is a
collective: rank 0 waits in it for rank 1, which has gone on to ``wait_for_everyone`` and waits
there for rank 0. The process group's timeout is short (``--timeout`` seconds, through accelerate's
``InitProcessGroupKwargs``) so that gloo raises instead of hanging for the default 30 minutes.
After ``trllint --fix`` both calls run on every rank, before the test; rank 0 saves.

    accelerate launch --multi_gpu --num_processes 2 scenario.py --out saved.pt --timeout 20
"""

import argparse
from datetime import timedelta

import torch
import torch.nn.functional as F
from accelerate import Accelerator, InitProcessGroupKwargs
from torch.utils.data import DataLoader, TensorDataset

PER_DEVICE_BATCH_SIZE = 2
FEATURES = [0.5, -1.0, 1.5, 2.0, -0.5, 1.0, 0.0, -2.0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="saved.pt")
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()

    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=args.timeout))])
    features = torch.tensor(FEATURES).unsqueeze(-1)
    targets = 2 * features + 1
    loader = DataLoader(TensorDataset(features, targets), batch_size=PER_DEVICE_BATCH_SIZE, shuffle=False)
    model = torch.nn.Linear(1, 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    examples_seen = torch.zeros(1)
    for inputs, labels in loader:
        loss = F.mse_loss(model(inputs), labels)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        examples_seen += inputs.shape[0]

    if accelerator.is_main_process:
        total_seen = accelerator.reduce(examples_seen, reduction="sum")
        state = accelerator.get_state_dict(model)
        torch.save({"state": state, "examples_seen": int(total_seen.item())}, args.out)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
