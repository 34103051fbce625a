import deepspeed


def maybe_wrap_reward_model(reward_model=None, ds_config=None):
    if reward_model is None:
        # Rule-based rewards only: nothing to wrap.
        return None
    engine, *_ = deepspeed.initialize(model=reward_model, config=ds_config)
    engine.eval()
    return engine
