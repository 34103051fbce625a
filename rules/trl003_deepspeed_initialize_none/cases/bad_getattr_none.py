from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class KTOLikeTrainer(Trainer):
    def __init__(self, model, args, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        ref = getattr(args, "ref_model", None)
        if self.is_deepspeed_enabled:
            # expect: TRL003
            self.ref_model = prepare_deepspeed(ref, self.accelerator)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        with self.accelerator.unwrap_model(model).disable_adapter():
            ref_logits = self.ref_model(**inputs).logits
        return (model(**inputs).logits - ref_logits).pow(2).mean()
