from transformers import Trainer
from trl.models.utils import prepare_deepspeed, prepare_fsdp


class OnlineDPOTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, peft_config=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if peft_config is not None:
            self.ref_model = None
        else:
            self.ref_model = ref_model

        # The upstream fix: nothing to prepare when the adapter doubles as the reference.
        if self.ref_model is not None:
            if self.is_deepspeed_enabled:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
            elif self.is_fsdp_enabled:
                self.ref_model = prepare_fsdp(self.ref_model, self.accelerator)
            else:
                self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)
