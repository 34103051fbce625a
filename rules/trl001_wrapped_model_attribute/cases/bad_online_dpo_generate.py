# The shape of TRL's Online DPO trainer: the wrapped model travels from training_step into
# _generate, which asks it for generation settings and calls generate on it.
import torch
from transformers import Trainer


class OnlineDPOLikeTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        prompt_ids = inputs["prompt_input_ids"]
        completion_ids = self._generate(model, prompt_ids)
        loss = self.compute_pair_loss(model, prompt_ids, completion_ids)
        self.accelerator.backward(loss)
        return loss.detach()

    def _generate(self, model, prompt_ids):
        # expect: TRL001
        pad_token_id = model.config.pad_token_id
        with torch.no_grad():
            # expect: TRL001
            output = model.generate(
                prompt_ids,
                max_new_tokens=16,
                do_sample=True,
                pad_token_id=pad_token_id,
            )
        return output[:, prompt_ids.size(1) :]

    def compute_pair_loss(self, model, prompt_ids, completion_ids):
        logits = model(torch.cat([prompt_ids, completion_ids], dim=1)).logits
        return -logits.log_softmax(-1).mean()
