from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class OnlineDPOTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, peft_config=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if peft_config is not None:
            # With a PEFT adapter there is no separate reference model: disable the adapter instead.
            self.ref_model = None
        elif ref_model is not None:
            self.ref_model = ref_model
        else:
            self.ref_model = self._create_ref_model(model)

        if self.is_deepspeed_enabled:
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
        elif self.ref_model is not None:
            self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)
