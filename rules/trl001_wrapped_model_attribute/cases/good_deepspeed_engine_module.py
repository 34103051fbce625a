# The DeepSpeed engine forwards generate(), save_checkpoint is its own; config is read via .module.
import deepspeed


def build(model, ds_config, prompt_ids):
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    use_cache = engine.module.config.use_cache
    sample = engine.generate(prompt_ids, max_new_tokens=4)
    engine.save_checkpoint("ckpt")
    return engine, optimizer, use_cache, sample
