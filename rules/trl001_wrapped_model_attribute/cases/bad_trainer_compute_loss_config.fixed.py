import torch.nn.functional as F
from transformers import Trainer


class Seq2SeqAwareTrainer(Trainer):
    def __init__(self, model, args, label_pad_token_id=-100, **kwargs):
        self.label_pad_token_id = label_pad_token_id
        super().__init__(model=model, args=args, **kwargs)
        self.model_is_encoder_decoder = self.model.config.is_encoder_decoder

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        # expect: TRL001
        if not self.model_is_encoder_decoder:
            logits = logits[:, :-1, :]
            labels = labels[:, 1:]
        loss = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=self.label_pad_token_id
        )
        return (loss, outputs) if return_outputs else loss
