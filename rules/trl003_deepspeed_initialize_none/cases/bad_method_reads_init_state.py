from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class GKDLikeTrainer(Trainer):
    def __init__(self, model, teacher_model=None, args=None, use_teacher=True, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.teacher_model = teacher_model if use_teacher else None
        self._prepare_teacher()

    def _prepare_teacher(self):
        if self.is_deepspeed_enabled:
            # expect: TRL003
            self.teacher_model = prepare_deepspeed(self.teacher_model, self.accelerator)
        elif self.teacher_model is not None:  # guarded everywhere but under DeepSpeed
            self.teacher_model = self.accelerator.prepare_model(self.teacher_model, evaluation_mode=True)
