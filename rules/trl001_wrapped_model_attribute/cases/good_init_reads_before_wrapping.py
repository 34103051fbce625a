# Reads in __init__ and before accelerator.prepare see the bare model.
import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, Trainer


class RouterTrainer(Trainer):
    def __init__(self, model, args=None, **kwargs):
        self.aux_loss_enabled = getattr(model.config, "output_router_logits", False)
        self.aux_loss_coef = getattr(model.config, "router_aux_loss_coef", 0.0)
        model.warnings_issued["estimate_tokens"] = True
        super().__init__(model=model, args=args, **kwargs)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        loss = outputs.loss
        if self.aux_loss_enabled:
            loss = loss + self.aux_loss_coef * outputs.aux_loss
        return (loss, outputs) if return_outputs else loss


def train(dataloader):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    model.gradient_checkpointing_enable()
    vocab_size = model.config.vocab_size
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for batch in dataloader:
        loss = model(**batch).logits[..., :vocab_size].mean()
        accelerator.backward(loss)
        optimizer.step()
