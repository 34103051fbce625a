# A GRPO-style trainer as TRL wrote it before prepare_fsdp: the `else` of a DeepSpeed test is not
# FSDP-free, so the reference model and the reward models stay on the CPU under FSDP.
from transformers import PreTrainedModel, Trainer

from trl.models.utils import prepare_deepspeed


class GRPOTrainer(Trainer):
    def __init__(self, model, ref_model, reward_funcs, args, train_dataset):
        super().__init__(model=model, args=args, train_dataset=train_dataset)
        self.ref_model = ref_model
        self.reward_funcs = reward_funcs

        if self.ref_model is not None:
            if self.is_deepspeed_enabled:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
            else:
                # expect: TRL002
                self.ref_model = self.accelerator.prepare_model(
                    self.ref_model, evaluation_mode=True, device_placement=True
                )

        for i, reward_func in enumerate(self.reward_funcs):
            if isinstance(reward_func, PreTrainedModel):
                # expect: TRL002
                self.reward_funcs[i] = self.accelerator.prepare_model(
                    reward_func, evaluation_mode=True, device_placement=True
                )
