from .base_trainer import DistributedTrainer


class KTOTrainer(DistributedTrainer):
    def __init__(self, model, accelerator, ref_model=None, precompute_ref_log_probs=False):
        super().__init__(model, accelerator)
        self.ref_model = ref_model
        self.precompute_ref_log_probs = precompute_ref_log_probs
        if self.accelerator.state.deepspeed_plugin is not None:
            # expect: TRL003
            self.ref_model = self._wrap_frozen(self.ref_model)
