# The shape of TRL's DPOTrainer before huggingface/trl#2200: under DeepSpeed, model.config is the
# engine's own config, so the coefficient silently reads 0.0 and the MoE auxiliary loss vanishes.
import torch
from trl import DPOTrainer


class MoEDPOTrainer(DPOTrainer):
    def __init__(self, model, ref_model=None, args=None, **kwargs):
        super().__init__(model=model, ref_model=ref_model, args=args, **kwargs)
        self.model_router_aux_loss_coef = getattr(self.model.config, "router_aux_loss_coef", 0.0)
        self.aux_loss_enabled = True

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        return (loss, metrics) if return_outputs else loss

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        output = self.concatenated_forward(model, batch)
        losses = output["losses"]
        if self.aux_loss_enabled:
            # expect: TRL001
            losses = losses + self.model_router_aux_loss_coef * output["aux_loss"]
        return losses.mean(), {}

    def concatenated_forward(self, model, batch):
        outputs = model(batch["input_ids"], attention_mask=batch["attention_mask"], output_router_logits=True)
        return {"losses": outputs.logits.mean(dim=(1, 2)), "aux_loss": outputs.aux_loss}
