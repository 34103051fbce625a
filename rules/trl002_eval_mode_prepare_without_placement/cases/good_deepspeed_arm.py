# The reference model is prepared in the DeepSpeed arm of the Trainer's backend test: DeepSpeed
# runs there, never FSDP, so the prepared model is placed on the device.
from transformers import Trainer

from trl.models.utils import prepare_deepspeed


class DistillationTrainer(Trainer):
    def _prepare_teacher(self, teacher, use_engine):
        if self.is_deepspeed_enabled:
            if use_engine:
                return prepare_deepspeed(teacher, self.accelerator)
            return self.accelerator.prepare_model(teacher, evaluation_mode=True)
        return teacher.to(self.accelerator.device)
