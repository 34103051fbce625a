import torch
from transformers import Trainer
from trl.models.utils import prepare_deepspeed


class PairwiseTrainer(Trainer):
    def __init__(self, model, ref_model, args=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.ref_model = ref_model
        if self.is_deepspeed_enabled:
            # An engine forwards what it does not define itself: generate reaches the model.
            self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)
        else:
            # accelerate wraps nothing in evaluation mode: this is the model itself.
            self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)

    def sample_reference(self, batch):
        with torch.no_grad():
            return self.ref_model.generate(
                input_ids=batch["prompt_input_ids"],
                attention_mask=batch["prompt_attention_mask"],
                max_new_tokens=self.args.max_new_tokens,
                do_sample=True,
            )


class Scorer:
    def __init__(self, accelerator, judge):
        self.accelerator = accelerator
        self.judge = accelerator.prepare_model(judge, evaluation_mode=True)

    def vocabulary_size(self):
        return self.judge.config.vocab_size
