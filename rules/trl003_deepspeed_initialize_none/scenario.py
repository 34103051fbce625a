"""TRL003 scenario: an Online-DPO-style trainer whose reference model is None under PEFT.

With an adapter on the policy there is no separate reference model ("we can just disable the
adapter"), so ``self.ref_model`` is None. The trainer still hands it to a ``prepare_deepspeed``
helper modelled on TRL's, which ends in ``deepspeed.initialize(model=model, ...)``; DeepSpeed
asserts ``deepspeed.initialize requires a model``. ``trllint --fix`` guards the call with
``if self.ref_model is not None:``, and the fixed copy trains a few steps with the policy itself
as the reference.

Run under ``accelerate launch --use_deepspeed --zero_stage 2 --num_processes 2``.
"""

from __future__ import annotations

import copy

import deepspeed
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from transformers import GPT2Config, GPT2LMHeadModel

STEPS = 3
BATCH = 2
SEQ = 8


def prepare_deepspeed(model, accelerator):
    """An evaluation-only DeepSpeed engine for a frozen model, as TRL's helper builds it."""
    config_kwargs = copy.deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    config_kwargs.pop("optimizer", None)
    config_kwargs.pop("scheduler", None)
    # A frozen reference model fits on each rank: no ZeRO sharding for it below stage 3.
    if config_kwargs["zero_optimization"]["stage"] != 3:
        config_kwargs["zero_optimization"]["stage"] = 0
    engine, *_ = deepspeed.initialize(model=model, config=config_kwargs)
    engine.eval()
    return engine


class OnlineDPOLikeTrainer:
    def __init__(self, model, ref_model=None, use_adapter=False):
        self.accelerator = Accelerator()
        self.world_size = torch.distributed.get_world_size()
        self.rank = torch.distributed.get_rank()
        # On the CPU accelerate's state counts one process per rank under DeepSpeed (it knows no
        # backend), while DeepSpeed's engine sees both: give DeepSpeed its batch sizes outright.
        ds_config = self.accelerator.state.deepspeed_plugin.deepspeed_config
        ds_config["train_micro_batch_size_per_gpu"] = BATCH
        ds_config["gradient_accumulation_steps"] = 1
        ds_config["train_batch_size"] = BATCH * self.world_size
        self.is_deepspeed_enabled = self.accelerator.state.deepspeed_plugin is not None
        if use_adapter:
            # With an adapter the reference is the policy with the adapter disabled.
            self.ref_model = None
        else:
            self.ref_model = ref_model
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)
        if self.is_deepspeed_enabled:
            self.ref_model = prepare_deepspeed(self.ref_model, self.accelerator)

    def reference_logits(self, input_ids):
        with torch.no_grad():
            if self.ref_model is None:
                return self.model(input_ids).logits
            return self.ref_model(input_ids).logits

    def train(self):
        vocab = self.model.module.config.vocab_size
        generator = torch.Generator().manual_seed(self.rank)
        for step in range(STEPS):
            input_ids = torch.randint(0, vocab, (BATCH, SEQ), generator=generator).to(self.accelerator.device)
            logits = self.model(input_ids).logits
            reference = self.reference_logits(input_ids)
            # A KL-to-reference loss: the part of DPO that needs the reference model.
            loss = F.kl_div(F.log_softmax(logits, -1), F.log_softmax(reference, -1), log_target=True)
            loss = loss + F.cross_entropy(logits[:, :-1].reshape(-1, vocab), input_ids[:, 1:].reshape(-1))
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()
            if self.rank == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
        if self.rank == 0:
            print(
                f"TRAINED {STEPS} steps on {self.world_size} ranks with {type(self.model).__name__} "
                f"ZeRO-{self.model.zero_optimization_stage()}",
                flush=True,
            )


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=SEQ, n_embd=16, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0)
    policy = GPT2LMHeadModel(config)
    trainer = OnlineDPOLikeTrainer(policy, use_adapter=True)
    trainer.train()


if __name__ == "__main__":
    main()
