"""TRL001 fix-safety scenario: fixes that would name a missing fact.

    accelerate launch --multi_gpu --num_processes 2 scenario_fix_safety.py --case optional-accelerator
    python scenario_fix_safety.py --case optional-accelerator --no-accelerator
    accelerate launch --multi_gpu --num_processes 2 scenario_fix_safety.py --case neighbour

``optional-accelerator``: a worker whose accelerator is optional reads ``self.policy.config``. Under
DDP that fails; a fix naming ``self.accelerator.unwrap_model`` repairs it there and breaks the run
without an accelerator, which works as written. ``neighbour``: the fix of
``self.model.generation_config`` leaves ``self.model.generate_batch`` two lines down going
through the wrapper, so the run still fails. Both fixes are unsafe: ``--fix`` leaves the file.
"""

import argparse
from types import SimpleNamespace

import torch
from accelerate import Accelerator


class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.config = SimpleNamespace(vocab_size=2)
        self.generation_config = SimpleNamespace(max_new_tokens=4)

    def forward(self, x):
        return self.linear(x)

    def generate_batch(self, x, config):
        return self.linear(x).argmax(-1)[: config.max_new_tokens]


class Worker:
    def __init__(self, model, accelerator: Accelerator | None = None):
        self.accelerator = accelerator
        self.policy = model
        if accelerator is not None:
            self.policy = accelerator.prepare(model)

    def vocab_size(self):
        return self.policy.config.vocab_size


class Sampler:
    def __init__(self, model):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)

    def sample(self, x):
        config = self.model.generation_config
        config.max_new_tokens = 2
        return self.model.generate_batch(x, config)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("optional-accelerator", "neighbour"), required=True)
    parser.add_argument("--no-accelerator", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    if args.case == "optional-accelerator":
        worker = Worker(TinyModel(), None if args.no_accelerator else Accelerator())
        print(f"TRL001 vocab_size={worker.vocab_size()}", flush=True)
    else:
        print(f"TRL001 sampled={Sampler(TinyModel()).sample(torch.ones(3, 2)).tolist()}", flush=True)


if __name__ == "__main__":
    main()
