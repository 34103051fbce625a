from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class DistillationTrainer(Trainer):
    # `teacher_model=None` only because it follows defaulted parameters: the trainer cannot run
    # without one, and every backend below fails on None, not only DeepSpeed.
    def __init__(self, model=None, teacher_model=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if self.is_deepspeed_enabled:
            self.teacher_model = prepare_deepspeed(teacher_model, self.accelerator)
        else:
            self.teacher_model = self.accelerator.prepare_model(teacher_model, evaluation_mode=True)
        self.temperature = args.temperature


class VocabAlignedDistiller(Trainer):
    def __init__(self, model=None, teacher_model=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if self.is_deepspeed_enabled:
            self.teacher_model = prepare_deepspeed(teacher_model, self.accelerator)
        elif self.is_fsdp_enabled:
            teacher_model.resize_token_embeddings(self.model.config.vocab_size)
            self.teacher_model = self.accelerator.prepare(teacher_model)
        else:
            self.teacher_model = teacher_model.to(self.accelerator.device)
