"""Near misses of reading `base_model` through a prepared model: the trainer reads it from the
unwrapped model, before `prepare`, or from a PEFT model it never prepared."""

from accelerate import Accelerator
from peft import get_peft_model
from transformers import AutoModelForCausalLM


class ValueHeadTrainer:
    def __init__(self, config, optimizer_cls, lora_config):
        self.config = config
        self.accelerator = Accelerator()
        model = AutoModelForCausalLM.from_pretrained(config.model_path)
        # before prepare: the bare model
        self.num_layers = len(model.base_model.layers)
        self.reference = get_peft_model(AutoModelForCausalLM.from_pretrained(config.model_path), lora_config)
        optimizer = optimizer_cls(model.parameters(), lr=config.lr)
        self.model, self.opt = self.accelerator.prepare(model, optimizer)

    def save(self, directory=None):
        self.accelerator.save_state(directory or self.config.checkpoint_dir)
        self.accelerator.unwrap_model(self.model).base_model.save_pretrained(f"hf_model_{directory}")
        # never prepared: no wrapper
        self.reference.base_model.save_pretrained(f"reference_{directory}")
