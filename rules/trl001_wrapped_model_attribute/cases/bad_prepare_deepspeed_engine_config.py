from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class TeacherStudentTrainer(Trainer):
    def __init__(self, model, teacher_model, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.teacher_model = prepare_deepspeed(teacher_model, self.accelerator)

    def teacher_vocab(self):
        # The engine's own `config` is DeepSpeed's configuration, not the model's.
        # expect: TRL001
        return self.teacher_model.config.vocab_size

    def teacher_defaults(self):
        # Forwarded to the model: fine through an engine.
        return self.teacher_model.generation_config
