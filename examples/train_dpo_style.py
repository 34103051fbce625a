"""A small DPO-style trainer with the bugs trllint exists for. Run `trllint examples/`."""

import deepspeed
import torch
from accelerate import Accelerator
from transformers import Trainer


def prepare_deepspeed(model, ds_config):
    # TRL's helper: ends in deepspeed.initialize, which asserts on a None model.
    engine, *_ = deepspeed.initialize(model=model, config=ds_config)
    engine.eval()
    return engine


class PairwiseTrainer(Trainer):
    def __init__(self, model, ref_model=None, reward_model=None, peft_config=None, **kwargs):
        super().__init__(model=model, **kwargs)
        if peft_config is not None:
            ref_model = None  # the adapter is switched off to get reference log-probs
        self.ref_model = ref_model
        if self.is_deepspeed_enabled:
            # With a PEFT adapter there is no reference model: deepspeed.initialize asserts.
            self.ref_model = prepare_deepspeed(self.ref_model, self.args.hf_deepspeed_config.config)
        # Under FSDP an eval-mode prepare neither wraps nor moves the model: it stays on the CPU.
        self.reward_model = self.accelerator.prepare_model(reward_model, evaluation_mode=True)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        # Under DDP `model` is a wrapper: AttributeError. Under DeepSpeed: the engine's config.
        aux_coef = getattr(model.config, "router_aux_loss_coef", 0.0)
        loss = outputs.loss + aux_coef * outputs.get("aux_loss", 0.0)
        chosen_rewards = outputs.logits[:, -1, 0]
        # Each rank logs its own slice: the Trainer writes rank 0's, half the data (TRL004).
        self.log({"rewards/chosen": chosen_rewards.mean().cpu().item()})
        return (loss, outputs) if return_outputs else loss


def main():
    accelerator = Accelerator()
    model = torch.nn.Linear(4, 4)
    model = accelerator.prepare(model)
    return accelerator, model
