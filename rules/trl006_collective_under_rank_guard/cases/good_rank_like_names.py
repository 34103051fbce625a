"""Tests that read a rank-like name but are answered alike on every rank."""
import os

import torch.distributed as dist
from transformers import Trainer

ddp = int(os.environ.get("RANK", -1)) != -1  # nanoGPT: "is this a distributed run?"


def finish(model, path):
    if ddp:
        dist.barrier()
    if os.environ.get("LOCAL_RANK", "-1") != "-1":
        dist.barrier()
    model.save_pretrained(path)


class LoraTrainer(Trainer):
    def __init__(self, *args, lora_rank=8, **kwargs):
        super().__init__(*args, **kwargs)
        self._lora_rank = lora_rank

    def log_adapter_norm(self, adapter):
        if self._lora_rank > 0:  # a configuration field, the same on every rank
            norms = self.accelerator.gather_for_metrics(adapter.weight.norm().reshape(1))
            self.log({"adapter_norm": norms.mean().item()})
        if self.control.should_log:  # the Trainer's flag, set alike on every rank
            norms = self.accelerator.gather_for_metrics(adapter.weight.norm().reshape(1))
            self.log({"adapter_norm_logged": norms.mean().item()})
