"""transformers' compute_loss, as trainers copy it: it reads `model.base_model` only where
`isinstance(model, PeftModel)` holds, and no wrapper (DDP, DataParallel, a DeepSpeed engine) is a
PeftModel, so there the model is bare. A test for `nn.Module` would say nothing (every wrapper is one)."""

from peft import PeftModel
from transformers import Trainer
from transformers.modeling_utils import unwrap_model
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


class RewardTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels") if self.label_smoother is not None and "labels" in inputs else None
        outputs = model(**inputs)
        if labels is not None:
            if isinstance(model, PeftModel):
                model_name = unwrap_model(model.base_model)._get_name()
            else:
                model_name = unwrap_model(model)._get_name()
            if model_name in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values():
                loss = self.label_smoother(outputs, labels, shift_labels=True)
            else:
                loss = self.label_smoother(outputs, labels)
        else:
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        return (loss, outputs) if return_outputs else loss
