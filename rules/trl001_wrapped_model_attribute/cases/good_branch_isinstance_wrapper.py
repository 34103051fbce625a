"""isinstance tests for the wrapper classes: the other arm holds the bare model."""

from accelerate import Accelerator
from deepspeed import DeepSpeedEngine
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP

accelerator = Accelerator()


def config_of(model):
    model = accelerator.prepare(model)
    if isinstance(model, (DDP, FSDP, DeepSpeedEngine)):
        config = model.module.config
    else:
        config = model.config
    return config


def generation_config_of(model):
    model = accelerator.prepare(model)
    return model.module.generation_config if isinstance(model, (DDP, DeepSpeedEngine)) else model.generation_config


def max_length(model):
    model = accelerator.prepare(model)
    if isinstance(model, DDP):
        return model.module.config.max_position_embeddings
    return model.config.max_position_embeddings


def embeddings(model):
    model = accelerator.prepare(model)
    if isinstance(model, (DDP, DeepSpeedEngine)): return model.module.get_input_embeddings()
    return model.get_input_embeddings()
