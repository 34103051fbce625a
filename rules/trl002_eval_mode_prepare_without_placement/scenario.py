"""TRL002 runtime scenario: a reference model prepared in evaluation mode, as TRL's DPO/GRPO did.

A policy and a frozen reference model are built from a tiny GPT-2 config. The policy goes through
``accelerator.prepare`` (wrapped, and under FSDP sharded and placed on the GPU); the reference
model goes through ``accelerator.prepare_model(..., evaluation_mode=True)``. Each step computes
the reference log-probabilities of a batch that lives on the policy's device, then a KL-style
loss for the policy.

Under ``accelerate launch --use_fsdp`` on a GPU the reference model is neither wrapped nor moved:
its parameters stay on the CPU and its first forward fails with "Expected all tensors to be on the
same device". ``trllint --fix`` adds ``device_placement=True`` and the step runs on the GPU.
"""

import torch
from accelerate import Accelerator
from transformers import GPT2Config, GPT2LMHeadModel

STEPS = 2
VOCAB = 64
SEQUENCE = 8
BATCH = 2


def tiny_model(seed: int) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=VOCAB, n_positions=SEQUENCE, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config)


def token_log_probs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
    return log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)


def main() -> None:
    accelerator = Accelerator()
    policy = tiny_model(seed=0)
    reference = tiny_model(seed=1)
    reference.requires_grad_(False)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-3)

    policy, optimizer = accelerator.prepare(policy, optimizer)
    reference = accelerator.prepare_model(reference, evaluation_mode=True)
    reference.eval()

    print(f"distributed type: {accelerator.distributed_type.value}", flush=True)
    print(f"policy device: {accelerator.device}", flush=True)
    print(f"reference model parameters on: {next(reference.parameters()).device.type}", flush=True)

    generator = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(STEPS):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQUENCE), generator=generator).to(accelerator.device)
        with torch.no_grad():
            reference_log_probs = token_log_probs(reference(tokens).logits, tokens)
        policy_log_probs = token_log_probs(policy(tokens).logits, tokens)
        loss = (policy_log_probs - reference_log_probs).pow(2).mean() - policy_log_probs.mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        print(
            f"step {step}: loss {loss.item():.4f} reference log-prob {reference_log_probs.mean().item():.4f}",
            flush=True,
        )
    accelerator.wait_for_everyone()
    print("scenario finished", flush=True)


if __name__ == "__main__":
    main()
