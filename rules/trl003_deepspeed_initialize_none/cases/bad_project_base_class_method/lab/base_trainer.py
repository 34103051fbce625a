import deepspeed
from accelerate import Accelerator


class DistributedTrainer:
    def __init__(self, model, accelerator: Accelerator):
        self.accelerator = accelerator
        self.model = accelerator.prepare(model)

    def _wrap_frozen(self, model):
        """A frozen copy (reference, reward) gets its own engine, sharded like the policy."""
        config = self.accelerator.state.deepspeed_plugin.deepspeed_config
        engine, *_ = deepspeed.initialize(model=model, config=config)
        engine.eval()
        return engine
