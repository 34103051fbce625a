"""DPO with a frozen reference model; launched with an FSDP config."""

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM

from losses import dpo_loss, sequence_logps


def main(model_name="Qwen/Qwen2.5-1.5B-Instruct", loader=None):
    accelerator = Accelerator(mixed_precision="bf16")
    policy = AutoModelForCausalLM.from_pretrained(model_name)
    reference = AutoModelForCausalLM.from_pretrained(model_name)
    reference.requires_grad_(False)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=5e-7)
    policy, optimizer, loader = accelerator.prepare(policy, optimizer, loader)
    # expect: TRL002
    reference = accelerator.prepare_model(reference, evaluation_mode=True)

    for batch in loader:
        logits = policy(batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        with torch.no_grad():
            ref_logits = reference(batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        logps = sequence_logps(logits, batch["labels"], batch["loss_mask"])
        ref_logps = sequence_logps(ref_logits, batch["labels"], batch["loss_mask"])
        loss = dpo_loss(logps[::2], logps[1::2], ref_logps[::2], ref_logps[1::2])
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
