# device_placement=False written out: the author chose it, so it is reported without a fix.
from transformers import Trainer


class DistillationTrainer(Trainer):
    def __init__(self, model, teacher_model, args, placement):
        super().__init__(model=model, args=args)
        # expect: TRL002
        self.teacher = self.accelerator.prepare_model(teacher_model, evaluation_mode=True, device_placement=False)
        # expect: TRL002
        self.draft_model = self.accelerator.prepare_model(self.draft_model, placement, True)
