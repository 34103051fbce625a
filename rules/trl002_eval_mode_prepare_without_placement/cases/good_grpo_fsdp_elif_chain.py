# TRL's current GRPO/DPO/KTO layout: FSDP takes its own branch, so the final `else` runs without FSDP.
from transformers import PreTrainedModel, Trainer

from trl.models.utils import prepare_deepspeed, prepare_fsdp


class GRPOTrainer(Trainer):
    def __init__(self, model, ref_model, reward_funcs, args, train_dataset):
        super().__init__(model=model, args=args, train_dataset=train_dataset)
        self.ref_model = ref_model
        self.reward_funcs = reward_funcs

        if self.ref_model is not None:
            if self.is_deepspeed_enabled:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
            elif self.is_fsdp_enabled:
                self.ref_model = prepare_fsdp(self.ref_model, self.accelerator)
            else:
                self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)

        for i, reward_func in enumerate(self.reward_funcs):
            if isinstance(reward_func, PreTrainedModel):
                if self.is_deepspeed_enabled or self.is_fsdp_enabled:
                    self.reward_funcs[i] = self._prepare_sharded(reward_func)
                else:
                    self.reward_funcs[i] = self.accelerator.prepare_model(reward_func, evaluation_mode=True)
