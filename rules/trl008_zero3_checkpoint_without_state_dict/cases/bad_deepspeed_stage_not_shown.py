"""A trainer that handles accelerate's DeepSpeed plugin but whose ZeRO stage comes from a config
the project does not ship: the checkpoint holds placeholders only if that stage is 3 (preview)."""

import os

from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer


class RolloutTrainer:
    def __init__(self, config):
        self.config = config
        self.accelerator = Accelerator(log_with=config.tracker)
        if self.accelerator.state.deepspeed_plugin is not None:
            self.accelerator.state.deepspeed_plugin.deepspeed_config["fp16"]["auto_cast"] = False
        self.tokenizer = AutoTokenizer.from_pretrained(config.model_path)
        model = AutoModelForCausalLM.from_pretrained(config.model_path)
        self.model = self.accelerator.prepare(model)

    def save_pretrained(self, directory=None, **kwargs):
        directory = directory or os.path.join(self.config.checkpoint_dir, "hf_model")
        self.accelerator.wait_for_everyone()
        # The callers' options go on as they came: none of this code passes a state dict.
        # expect: TRL008
        self.accelerator.unwrap_model(self.model).save_pretrained(directory, **kwargs)
        if self.accelerator.is_main_process:
            self.tokenizer.save_pretrained(directory)

    def save_final(self, directory):
        self.accelerator.wait_for_everyone()
        # expect: TRL008
        self.accelerator.unwrap_model(self.model).save_pretrained(directory, safe_serialization=True)
