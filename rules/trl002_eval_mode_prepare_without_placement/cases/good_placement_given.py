# TRL's own fix for reward models: device_placement=True beside evaluation_mode=True.
from transformers import PreTrainedModel, Trainer

from trl.models.utils import prepare_deepspeed


class RLOOTrainer(Trainer):
    def _prepare_reward_funcs(self):
        for i, reward_func in enumerate(self.reward_funcs):
            if isinstance(reward_func, PreTrainedModel):
                if self.is_deepspeed_enabled:
                    self.reward_funcs[i] = prepare_deepspeed(reward_func, self.accelerator)
                else:
                    # set device placement to True to make `prepare_model` move `reward_func` to device when using fsdp
                    self.reward_funcs[i] = self.accelerator.prepare_model(
                        reward_func, evaluation_mode=True, device_placement=True
                    )
        self.ref_model = self.accelerator.prepare_model(self.ref_model, True, True)
