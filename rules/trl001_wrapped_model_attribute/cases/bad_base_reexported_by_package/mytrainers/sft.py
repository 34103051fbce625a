import torch.nn.functional as F

from mytrainers import BaseTrainer


class SFTTrainer(BaseTrainer):
    def training_step(self, batch):
        logits = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        # expect: TRL001
        vocab_size = self.model.config.vocab_size
        return F.cross_entropy(logits.view(-1, vocab_size), batch["labels"].view(-1), ignore_index=-100)

    def sample(self, prompt_ids, max_new_tokens=64):
        # expect: TRL001
        return self.model.generate(prompt_ids, max_new_tokens=max_new_tokens, do_sample=False)
