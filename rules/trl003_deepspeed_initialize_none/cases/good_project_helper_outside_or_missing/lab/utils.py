import deepspeed


def init_inference_engine(model, config):
    engine, *_ = deepspeed.initialize(model=model, config=config)
    return engine
