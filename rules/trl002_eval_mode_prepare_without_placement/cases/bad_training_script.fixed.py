# A plain accelerate script: the accelerator is a local name, under another name too.
import torch
from accelerate import Accelerator
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    accelerator = Accelerator(mixed_precision="bf16")
    acc = accelerator
    config = AutoConfig.from_pretrained("sshleifer/tiny-gpt2")
    policy = AutoModelForCausalLM.from_config(config)
    reference = AutoModelForCausalLM.from_config(config)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-5)
    policy, optimizer = accelerator.prepare(policy, optimizer)
    # expect: TRL002
    reference = acc.prepare_model(
        reference, evaluation_mode=True, device_placement=True
    )
    # expect: TRL002
    critic = Accelerator().prepare_model(
        AutoModelForCausalLM.from_config(config), evaluation_mode=True, device_placement=True
    )
    return policy, reference, critic


if __name__ == "__main__":
    main()
