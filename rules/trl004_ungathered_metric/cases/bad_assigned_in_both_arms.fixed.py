# The accuracy is this rank's when the batch has masked tokens, a constant otherwise: logged as is,
# it is still one rank's number.
import torch
from transformers import Trainer


class MaskedDiffusionTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        input_ids = inputs["input_ids"]
        masked_indices = torch.rand(input_ids.shape, device=input_ids.device) < 0.15
        if masked_indices.any():
            logits = model(input_ids=input_ids).logits
            loss = torch.nn.functional.cross_entropy(logits[masked_indices], input_ids[masked_indices])
            accuracy = (logits[masked_indices].argmax(-1) == input_ids[masked_indices]).float().mean()
        else:
            loss = torch.tensor(0.0, device=input_ids.device, requires_grad=True)
            accuracy = torch.tensor(0.0, device=input_ids.device)
        # expect: TRL004
        self.log({"accuracy": self.accelerator.gather(accuracy).mean().item()})
        return loss
