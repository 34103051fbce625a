from transformers import Trainer


class DefensiveTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if hasattr(model, "config"):
            use_cache = model.config.use_cache
        else:
            use_cache = False
        vocab = model.config.vocab_size if hasattr(model, "config") else None
        named = hasattr(model, "name_or_path") and model.name_or_path.endswith("-moe")
        outputs = model(**inputs, use_cache=use_cache)
        loss = outputs.logits[..., :vocab].mean() if named else outputs.loss
        return (loss, outputs) if return_outputs else loss
