# device_placement written out (False, or a variable): the author decided where the model lives,
# e.g. a teacher sharded at load time that owns its placement. Not proven to stay on the CPU.
from transformers import Trainer


class DistillationTrainer(Trainer):
    def __init__(self, model, teacher_model, args, placement):
        super().__init__(model=model, args=args)
        self.teacher = self.accelerator.prepare_model(teacher_model, evaluation_mode=True, device_placement=False)
        self.draft_model = self.accelerator.prepare_model(self.draft_model, placement, True)
