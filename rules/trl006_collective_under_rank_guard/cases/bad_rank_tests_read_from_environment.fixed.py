"""Rank tests spelled without accelerate's names: the launcher's environment and TrainingArguments."""
import os

import torch.distributed as dist
from transformers import Trainer


def save_checkpoint(model, path):
    if os.environ["LOCAL_RANK"] == "0":
        model.save_pretrained(path)
        # expect: TRL006
        dist.barrier()


def report(metrics):
    if os.getenv("RANK", "0") == "0":
        # expect: TRL006
        dist.all_reduce(metrics["loss"])
        print(metrics)


class LoggingTrainer(Trainer):
    def log_gathered(self, value):
        # expect: TRL006
        values = self.accelerator.gather_for_metrics(value)
        # TrainingArguments.should_log is process_index == 0 (per node with log_on_each_node)
        if self.args.should_log:
            self.log({"value": values.mean().item()})
