from typing import Union

import deepspeed
from torch import nn


def as_engine(model: Union[nn.Module, None], config: dict):
    # expect: TRL003
    return deepspeed.initialize(model=model, config=config)[0]
