from typing import Optional

import deepspeed
import torch.nn as nn


def build_eval_engine(model: Optional[nn.Module], ds_config: dict):
    """A frozen DeepSpeed engine for evaluation."""
    # expect: TRL003
    engine, *_ = deepspeed.initialize(model=model, config=ds_config)
    engine.eval()
    return engine
