"""TRL001 runtime scenario: a Trainer subclass whose loss reads ``model.config`` in the step.

The shape of TRL's DPO trainers before huggingface/trl#2200: the auxiliary-loss coefficient is
read from the step's ``model`` argument. Launched on several processes that argument is the
wrapper: DistributedDataParallel raises ``'DistributedDataParallel' object has no attribute
'config'``; a DeepSpeed engine has a ``config`` of its own, so the coefficient silently reads
0.0. ``trllint --fix`` caches the value in ``__init__`` instead, as TRL's fix did.

Tiny GPT-2 built from a config (no downloads), a few optimizer steps. Each rank prints the
coefficient it used (``TRL001 aux_loss_coef=...``), so a test can check the number, not just
the exit code.
"""

import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

AUX_LOSS_COEF = 0.25


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, size: int, length: int, vocab_size: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab_size, (size, length), generator=generator)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> dict:
        return {"input_ids": self.ids[index], "labels": self.ids[index]}


class AuxLossTrainer(Trainer):
    def __init__(self, model, args, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.coefficients_used = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        # A stand-in for an MoE router loss: pull the logits' scale down.
        aux_loss = outputs.logits.float().pow(2).mean()
        coefficient = getattr(model.config, "router_aux_loss_coef", 0.0)
        self.coefficients_used.append(coefficient)
        loss = outputs.loss + coefficient * aux_loss
        return (loss, outputs) if return_outputs else loss


def main() -> int:
    config = GPT2Config(n_layer=1, n_head=2, n_embd=32, n_positions=32, vocab_size=64)
    config.router_aux_loss_coef = AUX_LOSS_COEF
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    args = TrainingArguments(
        output_dir="trl001-out",
        per_device_train_batch_size=2,
        max_steps=3,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = AuxLossTrainer(model, args, train_dataset=RandomTokens(16, 16, config.vocab_size))
    trainer.train()
    wrapper = type(trainer.model_wrapped).__name__
    rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
    for coefficient in trainer.coefficients_used:
        print(f"TRL001 rank={rank} wrapper={wrapper} aux_loss_coef={coefficient}", flush=True)
    if torch.distributed.is_initialized():
        # Joins the group's threads now: left to process exit, gloo's can abort a rank (launch.py).
        torch.distributed.destroy_process_group()
    return 0 if trainer.state.global_step == args.max_steps else 1


if __name__ == "__main__":
    sys.exit(main())
