from accelerate import Accelerator


class RolloutWorker:
    """The accelerator is optional: the fix may not name it as if it were always there."""

    def __init__(self, model, accelerator: Accelerator | None = None):
        self.accelerator = accelerator
        self.model = model
        if accelerator is not None:
            self.model = accelerator.prepare(model)

    def rollout(self, batch):
        # expect: TRL001
        return self.model.generate(**batch, max_new_tokens=64)


class Evaluator:
    """Bound in __init__ but cleared by another constructor-like method."""

    def __init__(self, model):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)

    def detach(self):
        self.accelerator = None

    def vocab(self):
        # expect: TRL001
        return self.model.config.vocab_size
