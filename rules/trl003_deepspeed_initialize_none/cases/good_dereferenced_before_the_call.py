from typing import Optional

from transformers import Trainer


class RewardGuidedTrainer(Trainer):
    def __init__(self, model, reward_model: Optional["ValueHeadModel"], reward_kind: str = "full", **kwargs):
        super().__init__(model=model, **kwargs)
        self.reward_model = reward_model
        if reward_kind == "full":
            if self.is_deepspeed_enabled:
                # Reading the wrapped model's flags would already have raised on None.
                if not (
                    getattr(reward_model.pretrained_model, "is_loaded_in_8bit", False)
                    or getattr(reward_model.pretrained_model, "is_loaded_in_4bit", False)
                ):
                    self.reward_model = self._prepare_deepspeed(self.reward_model)
            else:
                self.reward_model = self.accelerator.prepare_model(self.reward_model, evaluation_mode=True)

    def _prepare_deepspeed(self, model):
        import deepspeed

        config = dict(self.accelerator.state.deepspeed_plugin.deepspeed_config)
        engine, *_ = deepspeed.initialize(model=model, config=config)
        engine.eval()
        return engine
