from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class GKDLikeTrainer(Trainer):
    def __init__(self, model, teacher_model=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.teacher_model = teacher_model
        if self.is_deepspeed_enabled:
            assert self.teacher_model is not None, "GKD needs a teacher model"
            self.teacher_model = prepare_deepspeed(self.teacher_model, self.accelerator)
