"""Code that handles both launches: several processes read through .module, one process reads the model."""

import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import DistributedType

accelerator = Accelerator()


def sample(model, prompt, tokenizer):
    model = accelerator.prepare(model)
    if accelerator.num_processes > 1:
        output = model.module.generate(**prompt, max_new_tokens=64)
    else:
        output = model.generate(**prompt, max_new_tokens=64)
    return tokenizer.batch_decode(output)


def vocabulary(model, world_size):
    model = accelerator.prepare(model)
    if world_size > 1:
        return model.module.config.vocab_size
    else:
        return model.config.vocab_size


def save(model, path):
    model = accelerator.prepare(model)
    if accelerator.distributed_type != DistributedType.NO:
        model.module.save_pretrained(path)
    else:
        model.save_pretrained(path)
    if accelerator.distributed_type == DistributedType.NO:
        model.config.to_json_file(f"{path}/config.json")


def generation_config(model):
    model = accelerator.prepare(model)
    if dist.is_initialized() and dist.get_world_size() >= 2:
        return model.module.generation_config
    return None if accelerator.num_processes != 1 else model.generation_config
