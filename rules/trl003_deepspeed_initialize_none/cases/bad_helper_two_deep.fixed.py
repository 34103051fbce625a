import deepspeed


def _initialize(model, config):
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine


def prepare_frozen(model, config):
    config = {**config, "zero_optimization": {"stage": 0}}
    engine = _initialize(model, config)
    engine.eval()
    return engine


def setup_models(policy, config, ref_model=None):
    engine, *_ = deepspeed.initialize(model=policy, config=config)
    # expect: TRL003
    if ref_model is not None:
        ref_engine = prepare_frozen(ref_model, config)
    return engine, ref_engine
