from transformers import Trainer


class CachedFlagTrainer(Trainer):
    def __init__(self, model, args=None, **kwargs):
        self.is_encoder_decoder = model.config.is_encoder_decoder
        super().__init__(model=model, args=args, **kwargs)

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        # expect: TRL001
        if model.config.is_encoder_decoder:
            inputs["decoder_input_ids"] = inputs["labels"]
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)
