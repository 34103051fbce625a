"""TRL001 own-member scenario: members of the model's own class, read through DDP.

    accelerate launch --multi_gpu --num_processes 2 scenario_own_members.py --case prepared
    accelerate launch --multi_gpu --num_processes 2 scenario_own_members.py --case helper

DDP forwards none of the wrapped module's own members (a submodule, a method, an attribute its
``__init__`` set). ``prepared``: the script's own ``nn.Module`` class goes through
``accelerator.prepare`` (DDP on several processes), then the step reads ``model.encode(...)``
and ``model.num_labels``. ``helper``: a function of the script returns
``DistributedDataParallel(model)``, then the step reads the same members of ``tagger``. Each raises
``AttributeError: 'DistributedDataParallel' object has no attribute ...``; the fixed reads go
through ``accelerator.unwrap_model(model)`` and ``getattr(model, "module", model)``. Each step
prints what it read (``TRL001 case=... rank=... step=... features=... labels=...``).
"""

import argparse

import torch
import torch.distributed as dist
from accelerate import Accelerator
from torch import nn
from torch.nn.parallel import DistributedDataParallel

STEPS = 2


class Tagger(nn.Module):
    def __init__(self, num_labels=4):
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.head = nn.Linear(16, num_labels)
        self.num_labels = num_labels

    def encode(self, inputs):
        return torch.tanh(self.encoder(inputs))

    def forward(self, inputs):
        return self.head(self.encode(inputs))


def train_prepared():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = Tagger()
    # One parameter group per part, as two-tower and adapter scripts build them.
    groups = [{"params": model.encoder.parameters()}, {"params": model.head.parameters(), "lr": 0.01}]
    optimizer = torch.optim.SGD(groups, lr=0.1)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(STEPS):
        inputs = torch.randn(4, 8)
        loss = model(inputs).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        features = model.encode(inputs)
        labels = model.num_labels
        print(f"TRL001 case=prepared rank={accelerator.process_index} step={step} features={features.shape[-1]} labels={labels}")


def wrap(model):
    return DistributedDataParallel(model)


def train_wrapped_by_helper():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    tagger = wrap(Tagger())
    optimizer = torch.optim.SGD(tagger.parameters(), lr=0.1)
    for step in range(STEPS):
        inputs = torch.randn(4, 8)
        loss = tagger(inputs).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        features = tagger.encode(inputs)
        labels = tagger.num_labels
        print(f"TRL001 case=helper rank={dist.get_rank()} step={step} features={features.shape[-1]} labels={labels}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("prepared", "helper"), required=True)
    if parser.parse_args().case == "prepared":
        train_prepared()
    else:
        train_wrapped_by_helper()
