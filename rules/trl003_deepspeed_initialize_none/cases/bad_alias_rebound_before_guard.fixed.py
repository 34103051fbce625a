from typing import Optional

from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class KTOLikeTrainer(Trainer):
    def __init__(self, model, ref_model: Optional[object] = None, reload_reference: bool = False, **kwargs):
        self.ref_model = ref_model
        super().__init__(model=model, **kwargs)
        if reload_reference:
            # `ref_model` now names another object: its guard says nothing of `self.ref_model`.
            ref_model = self._load_reference()
        if ref_model is not None and self.is_deepspeed_enabled:
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)

    def _load_reference(self):
        return type(self.model).from_pretrained(self.args.ref_model_path)


class SFTWithReference(Trainer):
    def __init__(self, model, ref_model=None, copy_reference=False, **kwargs):
        super().__init__(model=model, **kwargs)
        if copy_reference:
            self.ref_model = ref_model
        else:
            self.ref_model = None
        # The alias holds in one arm only.
        if ref_model is not None and self.is_deepspeed_enabled:
            # expect: TRL003
            if self.ref_model is not None:
                self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
