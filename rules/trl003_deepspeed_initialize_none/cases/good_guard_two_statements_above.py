from typing import Optional

import deepspeed
from torch import nn


def build_eval_engine(model: Optional[nn.Module], ds_config: dict):
    if model is None:
        raise ValueError("an evaluation engine needs a model")
    ds_config = {**ds_config, "zero_optimization": {"stage": 0}}
    model.requires_grad_(False)
    engine, *_ = deepspeed.initialize(model=model, config=ds_config)
    return engine
