from base import BaseTrainer


class CausalLMTrainer(BaseTrainer):
    def compute_metrics(self, logits, labels):
        vocab_size = self.model.config.vocab_size
        predictions = logits.view(-1, vocab_size).argmax(-1)
        return (predictions == labels.view(-1)).float().mean()

    def generate(self, input_ids):
        return self.model.generate(input_ids, max_new_tokens=32)
