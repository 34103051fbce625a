from accelerate import Accelerator


class Sampler:
    def __init__(self, model):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)

    def sample(self, batch):
        # expect: TRL001
        config = self.accelerator.unwrap_model(self.model).generation_config
        config.max_new_tokens = 32
        # The model class's own method, hidden by DDP as well: unwrapping the line above alone
        # would leave this one failing.
        return self.accelerator.unwrap_model(self.model).generate_batch(batch, config)

    def vocab_size(self):
        # Only members the rule repairs, and members a wrapper answers itself: the fix stays safe.
        self.model.eval()
        # expect: TRL001
        return self.accelerator.unwrap_model(self.model).config.vocab_size
