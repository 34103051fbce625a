"""TRL001 scenario: the model's own members read through a DDP a module of the project made.

    accelerate launch --multi_gpu --num_processes 2 scenario_wrapped_elsewhere.py

``scenario_wrapped_elsewhere_dist.py`` (the project's ``dist_utils``) returns
``DistributedDataParallel(model)``; the script then builds its optimizer from
``model.backbone`` and ``model.head`` and reads ``model.num_classes``: ``AttributeError:
'DistributedDataParallel' object has no attribute 'backbone'``. The fixed reads go through
``model.module``. Each step prints what it read (``TRL001 rank=... step=... classes=...``).
"""

import torch
from torch import nn

from scenario_wrapped_elsewhere_dist import init_distributed, wrap_model

STEPS = 2


class Segmenter(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.backbone = nn.Linear(8, 16)
        self.head = nn.Linear(16, num_classes)

    def forward(self, inputs):
        return self.head(torch.relu(self.backbone(inputs)))


def main():
    rank = init_distributed()
    torch.manual_seed(0)
    model = wrap_model(Segmenter())
    groups = [{"params": model.backbone.parameters(), "lr": 0.01}, {"params": model.head.parameters()}]
    optimizer = torch.optim.SGD(groups, lr=0.1)
    for step in range(STEPS):
        inputs = torch.randn(4, 8)
        target = torch.randint(0, model.num_classes, (4,))
        loss = nn.functional.cross_entropy(model(inputs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"TRL001 rank={rank} step={step} classes={model.num_classes}")


if __name__ == "__main__":
    main()
