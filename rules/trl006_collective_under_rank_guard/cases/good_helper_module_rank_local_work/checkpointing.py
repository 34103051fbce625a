"""Checkpoints: the full weights are gathered on every rank, then written by the main process."""

import json
import os

import torch


def gather_full_state(accelerator, model):
    # Every rank takes part: under ZeRO-3 or FSDP the shards are gathered here.
    return accelerator.get_state_dict(model)


def save_weights(state_dict, output_dir):
    os.makedirs(output_dir, exist_ok=True)
    torch.save(state_dict, os.path.join(output_dir, "pytorch_model.bin"))


def write_metrics(accelerator, metrics, output_dir):
    if not accelerator.is_main_process:
        return
    with open(os.path.join(output_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
