from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class RLOOLikeTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.ref_model = ref_model
        if self.ref_model is not None and self.is_deepspeed_enabled:
            self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
        elif self.ref_model is not None:
            self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)
