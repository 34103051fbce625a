"""A DeepSpeed ZeRO-3 run that writes the engine's module with torch.save: each rank's
state_dict() holds the parameters' empty placeholders, so the file holds no weights."""

import argparse
import os

import deepspeed
import torch
from transformers import AutoModelForCausalLM


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="EleutherAI/pythia-410m")
    parser.add_argument("--zero_stage", type=int, default=3)
    parser.add_argument("--output_dir", default="out")
    return parser.parse_args()


def build(args):
    ds_config = {
        "train_micro_batch_size_per_gpu": 4,
        "bf16": {"enabled": True},
        "zero_optimization": {"stage": args.zero_stage, "overlap_comm": True},
    }
    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    return engine, optimizer


def save_reference(engine, output_dir, rank):
    os.makedirs(output_dir, exist_ok=True)
    if rank == 0:
        model_to_save = engine.module if hasattr(engine, "module") else engine
        # expect: TRL008
        torch.save(model_to_save.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))


def save_weights(engine, output_dir):
    weights = engine.module.state_dict()
    # expect: TRL008
    torch.save(weights, os.path.join(output_dir, "weights.pt"))


def update_reference(reference, engine, args):
    for ref_param, param in zip(reference.parameters(), engine.module.parameters()):
        if args.zero_stage == 3:
            with deepspeed.zero.GatheredParameters([param, ref_param], modifier_rank=0):
                ref_param.data.copy_(param.data)
        else:
            ref_param.data.copy_(param.data)
