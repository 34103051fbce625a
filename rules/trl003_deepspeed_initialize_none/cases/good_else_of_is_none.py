from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class PPOLikeTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, is_peft_model=False, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.ref_model = None if is_peft_model else ref_model
        if self.is_deepspeed_enabled:
            if self.ref_model is None:
                if not is_peft_model:
                    raise ValueError("No reference model and model is not a Peft model.")
            else:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
