from copy import deepcopy

import deepspeed


def prepare_deepspeed(model, accelerator):
    """TRL's helper: `model` is required here, callers decide whether there is one."""
    config_kwargs = deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    stage = config_kwargs["zero_optimization"]["stage"]
    if model is not None:
        hidden_size = getattr(model.config, "hidden_size", None)
        if hidden_size is not None and stage == 3:
            config_kwargs["zero_optimization.reduce_bucket_size"] = hidden_size * hidden_size
    if stage != 3:
        config_kwargs["zero_optimization"]["stage"] = 0
    model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
    model.eval()
    return model
