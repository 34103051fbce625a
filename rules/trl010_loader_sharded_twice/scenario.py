"""TRL010 runtime scenario: a loader sharded by its own DistributedSampler, then by accelerate.

Two ranks train a one-feature regression on a set of sixteen examples. The loader takes a
``DistributedSampler`` (each rank: its half of the set) and is then passed to
``accelerator.prepare``, which shards it again (each rank: every other batch of its half). Each
example carries its index; at the end the ranks gather the indexes they trained on and rank 0
prints how many distinct examples the job saw. Written as is, a quarter of the set reaches each
rank and half of it is never seen; after ``trllint --fix --unsafe-fixes`` the sampler is gone, the
loader shuffles, and accelerate alone shards it: every example once.

    accelerate launch --multi_gpu --num_processes 2 scenario.py
"""

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EXAMPLES = 16
PER_DEVICE_BATCH_SIZE = 2


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    features = torch.linspace(-2.0, 2.0, EXAMPLES).unsqueeze(-1)
    targets = 2 * features + 1
    indexes = torch.arange(EXAMPLES)
    dataset = TensorDataset(indexes, features, targets)
    train_dataloader = DataLoader(
        dataset,
        batch_size=PER_DEVICE_BATCH_SIZE,
        sampler=DistributedSampler(dataset, shuffle=True, seed=0),
    )
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

    seen = []
    for index, inputs, labels in train_dataloader:
        loss = F.mse_loss(model(inputs), labels)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        seen.append(index)

    steps = torch.tensor([len(seen)])
    all_seen = accelerator.gather(torch.cat(seen))
    all_steps = accelerator.gather(steps)
    if accelerator.is_main_process:
        distinct = sorted(set(all_seen.tolist()))
        print(f"TRL010 steps per rank: {all_steps.tolist()}")
        print(f"TRL010 distinct examples seen: {len(distinct)} of {EXAMPLES}")
        print(f"TRL010 examples: {distinct}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
