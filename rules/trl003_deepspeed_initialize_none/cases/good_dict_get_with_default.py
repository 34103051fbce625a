import deepspeed


def reference_engine(models: dict, policy, ds_config: dict):
    # Without a separate reference the policy's frozen copy is used.
    reference = models.get("reference", policy)
    engine, *_ = deepspeed.initialize(model=reference, config=ds_config)
    return engine
