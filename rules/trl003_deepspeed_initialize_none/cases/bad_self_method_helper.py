from copy import deepcopy

import deepspeed
from transformers import Trainer


class DPOLikeTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, precompute_ref_log_probs=False, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.ref_model = None if precompute_ref_log_probs else ref_model
        if self.is_deepspeed_enabled:
            # expect: TRL003
            self.ref_model = self._prepare_deepspeed(self.ref_model)

    def _prepare_deepspeed(self, model):
        config_kwargs = deepcopy(self.accelerator.state.deepspeed_plugin.deepspeed_config)
        if config_kwargs["zero_optimization"]["stage"] != 3:
            config_kwargs["zero_optimization"]["stage"] = 0
        model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
        model.eval()
        return model
