from copy import deepcopy

import deepspeed


def init_inference_engine(model, accelerator):
    """Wrap a frozen model (reference or reward) in its own DeepSpeed engine for inference."""
    ds_config = deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    if ds_config["zero_optimization"]["stage"] != 3:
        ds_config["zero_optimization"]["stage"] = 0
    engine, *_ = deepspeed.initialize(model=model, config=ds_config)
    engine.eval()
    return engine
