from transformers import Trainer

from .deepspeed_utils import init_inference_engine


class DPOTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, peft_config=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if peft_config is not None:
            # With a PEFT adapter the reference log-probs come from the model with the adapter off.
            self.ref_model = None
        else:
            self.ref_model = ref_model

        if self.is_deepspeed_enabled:
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = init_inference_engine(self.ref_model, self.accelerator)
