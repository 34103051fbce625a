"""The script builds its own DeepSpeed ZeRO-3 launch: no config file needed to know it shards."""

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from transformers import AutoModelForCausalLM

deepspeed_plugin = DeepSpeedPlugin(zero_stage=3, gradient_accumulation_steps=2, zero3_save_16bit_model=True)
accelerator = Accelerator(mixed_precision="bf16", deepspeed_plugin=deepspeed_plugin)


def train(loader, output_dir):
    model = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-1b")
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        accelerator.backward(model(**batch).loss)
        optimizer.step()
        optimizer.zero_grad()
    # expect: TRL006
    state_dict = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        accelerator.unwrap_model(model).save_pretrained(output_dir, state_dict=state_dict)
