# evaluation_mode given by position, and device_placement=None (accelerate's default) spelled out.
from accelerate import Accelerator

accelerator = Accelerator()


def prepare_models(policy, reference, reward):
    policy = accelerator.prepare(policy)
    # expect: TRL002
    reference = accelerator.prepare_model(reference, True, True)
    # expect: TRL002
    reward = accelerator.prepare_model(reward, device_placement=True, evaluation_mode=True)
    return policy, reference, reward
