from transformers import Trainer
from trl import create_reference_model
from trl.models.utils import prepare_deepspeed


class PPOLikeTrainer(Trainer):
    def __init__(self, model, ref_model=None, args=None, is_peft_model=False, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if ref_model:
            self.ref_model = ref_model
        elif is_peft_model:
            self.ref_model = None
        else:
            self.ref_model = create_reference_model(model)

        if self.is_deepspeed_enabled:
            # The reference model is frozen: ZeRO-0 unless the policy is sharded with ZeRO-3.
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = prepare_deepspeed(
                    self.ref_model,  # frozen copy
                    self.accelerator,
                )  # evaluation engine
