# Accelerator(device_placement=False): the author places models by hand, so adding placement moves
# this one even on one process. The fix is offered as unsafe.
from accelerate import Accelerator


class Evaluator:
    def __init__(self, model, ref_model):
        self.accelerator = Accelerator(device_placement=False)
        self.model = self.accelerator.prepare(model)
        # expect: TRL002
        self.ref_model = self.accelerator.prepare_model(
            ref_model, evaluation_mode=True, device_placement=True
        )
