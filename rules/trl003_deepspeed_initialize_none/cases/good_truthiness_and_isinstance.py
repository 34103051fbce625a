import deepspeed
from torch import nn


def wrap_frozen(reward_model=None, ref_model=None, ds_config=None):
    engines = []
    if isinstance(reward_model, nn.Module):
        engines.append(deepspeed.initialize(model=reward_model, config=ds_config)[0])
    if ref_model and not getattr(ref_model, "is_loaded_in_4bit", False):
        engines.append(deepspeed.initialize(model=ref_model, config=ds_config)[0])
    return engines
