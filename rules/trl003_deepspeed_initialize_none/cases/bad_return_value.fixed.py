from typing import Union

import deepspeed
from torch import nn


def as_engine(model: Union[nn.Module, None], config: dict):
    # expect: TRL003
    if model is not None:
        return deepspeed.initialize(model=model, config=config)[0]
