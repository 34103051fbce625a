from transformers import Trainer

from mytrl.utils import prepare_deepspeed


class ORPOTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, peft_config=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.ref_model = None if peft_config is not None else ref_model
        if self.is_deepspeed_enabled:
            self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
