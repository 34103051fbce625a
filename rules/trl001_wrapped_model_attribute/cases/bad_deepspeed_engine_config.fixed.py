# A DeepSpeed engine forwards unknown attributes to its module but has a `config` of its own:
# engine.config.use_cache is no error, just DeepSpeed's config dict read by the wrong name.
import deepspeed


def build(model, ds_config):
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, model_parameters=model.parameters(), config=ds_config
    )
    # expect: TRL001
    if getattr(engine.module.config, "use_cache", False):
        # expect: TRL001
        engine.module.config.use_cache = False
    return engine, optimizer, scheduler


def build_inference(model, ds_config):
    engine = deepspeed.initialize(model=model, config=ds_config)[0]
    # expect: TRL001
    return engine, engine.module.config.eos_token_id
