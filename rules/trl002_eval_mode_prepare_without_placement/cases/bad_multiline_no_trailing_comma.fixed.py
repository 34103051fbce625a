# Multi-line calls without a trailing comma, a hanging indent, and a comment after the last argument.
from transformers import Trainer


class KTOTrainer(Trainer):
    def __init__(self, model, ref_model, teacher, embedder, args):
        super().__init__(model=model, args=args)
        # expect: TRL002
        self.ref_model = self.accelerator.prepare_model(
            ref_model,
            evaluation_mode=True,
            device_placement=True
        )
        # expect: TRL002
        self.teacher = self.accelerator.prepare_model(teacher,
                                                      evaluation_mode=True,
                                                      device_placement=True)
        # expect: TRL002
        self.embedder = self.accelerator.prepare_model(
            embedder,
            evaluation_mode=True,  # only used to embed prompts
            device_placement=True
        )
        # expect: TRL002
        self.judge = self.accelerator.prepare_model(
            self.judge, evaluation_mode=True, device_placement=True
        )
