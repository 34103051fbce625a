# Trainer keeps self.model unwrapped; the step's `model` argument is the wrapper.
from transformers import Trainer


class EncoderDecoderAwareTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        logits = outputs.logits
        if not self.model.config.is_encoder_decoder:
            logits = logits[:, :-1]
        loss = logits.float().logsumexp(-1).mean()
        return (loss, outputs) if return_outputs else loss

    def save_model(self, output_dir=None, _internal_call=False):
        self.model.generation_config.do_sample = False
        super().save_model(output_dir, _internal_call)
