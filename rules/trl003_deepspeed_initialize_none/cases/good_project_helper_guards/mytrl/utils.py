from copy import deepcopy

import deepspeed


def prepare_deepspeed(model, accelerator):
    """Our copy of TRL's helper, tolerant of a missing reference model."""
    if model is None:
        return None
    config_kwargs = deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    if config_kwargs["zero_optimization"]["stage"] != 3:
        config_kwargs["zero_optimization"]["stage"] = 0
    model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
    model.eval()
    return model
