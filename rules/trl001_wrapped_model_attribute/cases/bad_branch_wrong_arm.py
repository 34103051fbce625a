"""Tests of the wrapper with the model member read on the arm where the model may be wrapped."""

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType
from torch.nn.parallel import DistributedDataParallel as DDP

accelerator = Accelerator()


def config_of(model):
    model = accelerator.prepare(model)
    # expect: TRL001
    return model.config if hasattr(model, "module") else model.module.config


def sample(model, prompt):
    model = accelerator.prepare(model)
    if accelerator.num_processes > 1:
        # expect: TRL001
        return model.generate(**prompt)
    return model.module.generate(**prompt)


def vocabulary(model, world_size):
    model = accelerator.prepare(model)
    if world_size == 1:
        return model.module.config.vocab_size
    else:
        # expect: TRL001
        return model.config.vocab_size


def save(model, path):
    model = accelerator.prepare(model)
    if accelerator.distributed_type == DistributedType.NO:
        return
    # expect: TRL001
    model.save_pretrained(path)


def embeddings(model):
    model = accelerator.prepare(model)
    # expect: TRL001
    if isinstance(model, DDP): return model.get_input_embeddings()
    return model.module.get_input_embeddings()


def max_length(model):
    model = accelerator.prepare(model)
    if isinstance(model, DDP):
        # expect: TRL001
        return model.config.max_position_embeddings
    return model.module.config.max_position_embeddings


def hidden_size(model):
    model = accelerator.prepare(model)
    # a test that every model passes says nothing about the wrapper
    if isinstance(model, torch.nn.Module):
        # expect: TRL001
        return model.config.hidden_size
    # expect: TRL001
    return model.config.hidden_size


def pad_token(model):
    model = accelerator.prepare(model)
    # expect: TRL001
    return hasattr(model, "module") and model.config.pad_token_id


def in_channels(model, args):
    model = accelerator.prepare(model)
    # diffusers' DreamBooth: a guard on several conditions, one of them the process count, says
    # nothing about the wrapper when it is false (any other condition may be false instead).
    if args.train_text_encoder and args.gradient_accumulation_steps > 1 and accelerator.num_processes > 1:
        raise ValueError("gradient accumulation is not supported when training two models")
    # expect: TRL001
    return model.config.in_channels
