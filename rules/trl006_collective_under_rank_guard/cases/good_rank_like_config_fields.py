"""A LoRA rank is a matrix rank: the same number on every process, whatever it is called."""
import torch
import torch.distributed as dist
import torch.nn as nn
from accelerate import Accelerator
from peft import LoraConfig, get_peft_model

accelerator = Accelerator()


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank=8, alpha=16):
        super().__init__()
        self.base = base
        self.rank = rank
        self.scaling = alpha / rank
        self.lora_a = nn.Parameter(torch.zeros(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        out = self.base(x)
        if self.rank > 0:
            out = out + (x @ self.lora_a.T @ self.lora_b.T) * self.scaling
        return out

    def merged_norm(self):
        if self.rank > 0:  # every rank holds the same adapter shape
            norms = accelerator.gather_for_metrics((self.lora_b @ self.lora_a).norm().reshape(1))
            return norms.mean()
        return torch.zeros(())


def wrap_with_adapters(model, config, args):
    r = config.rank
    if r > 0:
        model = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, target_modules=["q_proj", "v_proj"]))
        dist.barrier()  # every process has wrapped its copy before the optimizer is built
    if args.lora_rank > 0:
        accelerator.wait_for_everyone()
    return model
