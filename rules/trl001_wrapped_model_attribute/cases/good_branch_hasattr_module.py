"""The bare model's config on the arm where the model has no .module: one process."""

from accelerate import Accelerator


def build(model, optimizer, loader):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    config = model.module.config if hasattr(model, "module") else model.config
    hidden = config.hidden_size
    if not hasattr(model, "module"):
        model.gradient_checkpointing_enable()
    pad = not hasattr(model, "module") and model.config.pad_token_id
    eos = hasattr(model, "module") or model.config.eos_token_id
    return model, optimizer, loader, hidden, pad, eos
