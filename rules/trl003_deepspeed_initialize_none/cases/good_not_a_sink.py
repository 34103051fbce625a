import deepspeed
from accelerate import Accelerator


def setup(model, ref_model=None):
    deepspeed.init_distributed()
    accelerator = Accelerator()
    # accelerator.prepare passes None through untouched: not deepspeed.initialize.
    model, ref_model = accelerator.prepare(model, ref_model)
    return accelerator, model, ref_model
