# Without evaluation_mode=True, prepare_model wraps the model (FSDP places it), so nothing is left behind.
from accelerate import Accelerator


def prepare(policy, value_head, frozen_encoder, eval_only: bool):
    accelerator = Accelerator()
    policy = accelerator.prepare_model(policy)
    value_head = accelerator.prepare_model(value_head, evaluation_mode=False)
    frozen_encoder = accelerator.prepare_model(frozen_encoder, None, False)
    # Not known to be True: nothing is reported for a value the linter cannot read.
    scorer = accelerator.prepare_model(frozen_encoder, evaluation_mode=eval_only)
    return policy, value_head, frozen_encoder, scorer
