"""TRL001 one-GPU scenario: a training loop that wraps the model by hand, then reads model.config.

The Trainer scenario (``scenario.py``) needs several ranks or several GPUs before anything wraps
the model. Scripts that wrap by hand do it on one GPU too: ``torch.nn.DataParallel(model,
device_ids=[0])``, or ``DistributedDataParallel`` in a one-rank process group. Both hide the
Hugging Face model behind ``.module``, so the step's ``model.config`` read raises
``AttributeError: 'DataParallel' object has no attribute 'config'`` (or
``'DistributedDataParallel' ...``). ``trllint --fix`` reads it through ``.module`` instead.

    python scenario_explicit_wrap.py --wrap dataparallel   # or --wrap ddp; needs CUDA

Tiny GPT-2 built from a config (no downloads), three optimizer steps; each step prints the
coefficient it used (``TRL001 rank=0 wrapper=... aux_loss_coef=...``).
"""

import argparse
import socket
import sys

import torch
from torch.nn.parallel import DistributedDataParallel
from transformers import GPT2Config, GPT2LMHeadModel

AUX_LOSS_COEF = 0.25
STEPS = 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wrap", choices=("dataparallel", "ddp"), required=True)
    args = parser.parse_args()

    config = GPT2Config(n_layer=1, n_head=2, n_embd=32, n_positions=32, vocab_size=64)
    config.router_aux_loss_coef = AUX_LOSS_COEF
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).to("cuda:0")
    if args.wrap == "dataparallel":
        model = torch.nn.DataParallel(model, device_ids=[0])
    else:
        torch.distributed.init_process_group(
            "nccl", init_method=f"tcp://127.0.0.1:{free_port()}", world_size=1, rank=0
        )
        model = DistributedDataParallel(model, device_ids=[0])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    generator = torch.Generator().manual_seed(0)
    for _ in range(STEPS):
        ids = torch.randint(0, 64, (2, 16), generator=generator).to("cuda:0")
        outputs = model(input_ids=ids, labels=ids)
        # A stand-in for an MoE router loss: pull the logits' scale down.
        aux_loss = outputs.logits.float().pow(2).mean()
        coefficient = getattr(model.config, "router_aux_loss_coef", 0.0)
        loss = outputs.loss.mean() + coefficient * aux_loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"TRL001 rank=0 wrapper={type(model).__name__} aux_loss_coef={coefficient}", flush=True)

    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
