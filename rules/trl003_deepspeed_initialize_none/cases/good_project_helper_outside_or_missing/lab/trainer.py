from ds_toolkit.engines import init_inference_engine
from .compat import wrap_frozen_model
from .generated import build_engine


class Trainer:
    """ds_toolkit is an installed package (outside this project); compat.py and generated.py
    are not in the tree (generated at build time): what they do is unknown."""

    def __init__(self, model, accelerator, ref_model=None, reward_model=None, value_model=None):
        self.accelerator = accelerator
        config = accelerator.state.deepspeed_plugin.deepspeed_config
        self.ref_model = init_inference_engine(ref_model, config)
        self.reward_model = wrap_frozen_model(reward_model, config)
        self.value_model = build_engine(value_model, config)
