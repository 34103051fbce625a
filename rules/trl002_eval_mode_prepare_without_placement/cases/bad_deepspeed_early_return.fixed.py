# An early return on DeepSpeed says nothing about FSDP; a nested helper still prepares on the CPU.
from transformers import Trainer

from trl.models.utils import prepare_deepspeed


class OnlineDPOTrainer(Trainer):
    def _prepare_frozen(self, model):
        if self.is_deepspeed_enabled:
            return prepare_deepspeed(model, self.accelerator)
        # expect: TRL002
        return self.accelerator.prepare_model(
            model, evaluation_mode=True, device_placement=True
        )

    def _prepare_judges(self, judges):
        def prepare(judge):
            # expect: TRL002
            return self.accelerator.prepare_model(
                judge, evaluation_mode=True, device_placement=True
            )

        return [prepare(judge) for judge in judges]
