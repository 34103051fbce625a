"""An RL trainer keeps its policy with a value head; the policy is prepared, and on several
processes accelerate hands back a DDP wrapper, which does not forward the Hugging Face model's
`base_model` property: saving the backbone raises AttributeError (trlx's `save`, trlx#181)."""

from accelerate import Accelerator
from transformers import AutoModelForCausalLM


class ValueHeadTrainer:
    def __init__(self, config, optimizer_cls):
        self.config = config
        self.accelerator = Accelerator()
        model = AutoModelForCausalLM.from_pretrained(config.model_path)
        optimizer = optimizer_cls(model.parameters(), lr=config.lr)
        self.model, self.opt = self.accelerator.prepare(model, optimizer)

    def save(self, directory=None):
        self.accelerator.save_state(directory or self.config.checkpoint_dir)
        # expect: TRL001
        self.model.base_model.save_pretrained(f"hf_model_{directory or self.config.checkpoint_dir}")
