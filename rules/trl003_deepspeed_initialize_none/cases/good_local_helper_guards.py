from copy import deepcopy

import deepspeed


def prepare_deepspeed(model, accelerator):
    """A local copy of TRL's helper that tolerates a missing model."""
    if model is None:
        return None
    config_kwargs = deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
    return model


class Trainer:
    def __init__(self, model, accelerator, ref_model=None):
        self.accelerator = accelerator
        self.ref_model = prepare_deepspeed(ref_model, accelerator)
