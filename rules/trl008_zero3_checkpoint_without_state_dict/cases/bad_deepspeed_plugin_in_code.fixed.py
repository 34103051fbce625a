"""The script builds its own DeepSpeed ZeRO-3 launch and saves the unwrapped model as it is."""

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
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    # expect: TRL008
    unwrapped.save_pretrained(output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save, state_dict=accelerator.get_state_dict(model))


def save_on_main(model, output_dir):
    if accelerator.is_main_process:
        # The rank test keeps a fix from adding a collective here: no fix, the message says so.
        # expect: TRL008
        accelerator.unwrap_model(model).save_pretrained(output_dir)


def save_every_rank(model, output_dir):
    # Every rank writes: the fix also lets only the main process write.
    # expect: TRL008
    accelerator.unwrap_model(model).save_pretrained(output_dir, safe_serialization=True, is_main_process=accelerator.is_main_process, state_dict=accelerator.get_state_dict(model))


def save_engine_module(engine, output_dir):
    # The model a DeepSpeed engine holds: the same placeholders (no accelerator to gather with).
    # expect: TRL008
    engine.module.save_pretrained(output_dir)


def save_rebound(model, output_dir):
    model = accelerator.unwrap_model(model)
    # The engine is out of reach by its name now: no fix.
    # expect: TRL008
    model.save_pretrained(output_dir, is_main_process=accelerator.is_main_process)
