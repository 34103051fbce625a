from typing import Optional

import torch
from transformers import PreTrainedModel, Trainer
from trl.models.utils import prepare_deepspeed


class PreferenceTrainer(Trainer):
    def __init__(self, model: PreTrainedModel, ref_model: Optional[PreTrainedModel], beta: float = 0.1, **kwargs):
        # The attribute is set from the argument, and the argument is what the guard tests.
        self.ref_model = ref_model
        self.beta = beta
        self._stored_metrics = {}
        super().__init__(model=model, **kwargs)

        if ref_model is not None:
            if self.is_deepspeed_enabled:
                if not getattr(ref_model, "is_loaded_in_4bit", False):
                    self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
            else:
                self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)

    def reference_logps(self, batch):
        with torch.no_grad():
            return self.ref_model(**batch).logits.log_softmax(-1)
