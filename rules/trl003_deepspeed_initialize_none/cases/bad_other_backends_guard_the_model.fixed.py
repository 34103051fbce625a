from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class OnlinePreferenceTrainer(Trainer):
    def __init__(self, model, ref_model=None, peft_config=None, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        if ref_model is None and peft_config is not None:
            self.ref_model = None  # the adapter, disabled, is the reference
        else:
            self.ref_model = ref_model

        if self.is_deepspeed_enabled:
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = prepare_deepspeed(self.ref_model, args.per_device_train_batch_size)
        else:
            # Only this arm knows the reference may be absent: None is a DeepSpeed-only crash.
            if self.ref_model is not None:
                self.ref_model = self.ref_model.to(self.accelerator.device)
