# FSDP ruled out by an assert, a negated test, or a conditional expression.
from transformers import Trainer

from trl.models.utils import prepare_fsdp


class BCOTrainer(Trainer):
    def __init__(self, model, ref_model, classifier, embedder, args):
        super().__init__(model=model, args=args)
        assert not self.is_fsdp_enabled, "BCO's embedding classifier is not supported with FSDP yet"
        self.classifier = self.accelerator.prepare_model(classifier, evaluation_mode=True)

    def prepare_reference(self, ref_model):
        if not self.is_fsdp_enabled and ref_model is not None:
            return self.accelerator.prepare_model(ref_model, evaluation_mode=True)
        return ref_model

    def prepare_embedder(self, embedder):
        return (
            prepare_fsdp(embedder, self.accelerator)
            if self.is_fsdp_enabled
            else self.accelerator.prepare_model(embedder, evaluation_mode=True)
        )
