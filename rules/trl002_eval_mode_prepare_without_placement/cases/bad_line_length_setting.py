# trllint-settings: {"line-length": 88}
# With Ruff's default line length: a one-line call the new argument pushes past 88 columns is
# split (a trailing comment counts, as in Ruff's formatter, and stays after the parenthesis).
from accelerate import Accelerator


def prepare_frozen(accelerator: Accelerator, reward_model, ref, judge):
    # expect: TRL002
    reward_model = accelerator.prepare_model(reward_model, evaluation_mode=True)
    # expect: TRL002
    ref = accelerator.prepare_model(ref, evaluation_mode=True)
    # expect: TRL002
    judge = accelerator.prepare_model(judge, evaluation_mode=True)  # scores only
    return reward_model, ref, judge
