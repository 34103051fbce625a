"""Fine-tuning under a ZeRO-3 launch the script builds itself, with samples and evaluation on rank 0."""

import torch
from accelerate import Accelerator, DeepSpeedPlugin

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_save_16bit_model=True))


def log_samples(model, tokenizer, prompts, step):
    unwrapped = accelerator.unwrap_model(model)
    inputs = tokenizer(prompts, return_tensors="pt", padding=True).to(accelerator.device)
    if accelerator.is_main_process:
        # expect: TRL007
        samples = unwrapped.generate(**inputs, max_new_tokens=64, do_sample=False)
        texts = tokenizer.batch_decode(samples, skip_special_tokens=True)
        print(f"step {step}: {texts[0]!r}")


@accelerator.on_main_process
def preview(model, inputs):
    # expect: TRL007
    return accelerator.unwrap_model(model).generate(**inputs, max_new_tokens=16)


def generate_everywhere(model, inputs):
    unwrapped = accelerator.unwrap_model(model)
    # The ranks' prompts differ: one finishes first and stops gathering.
    # expect: TRL007
    return unwrapped.generate(**inputs, max_new_tokens=256, synced_gpus=False)


def train(model, optimizer, loader, tokenizer, prompts):
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(model(**batch).loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            log_samples(model, tokenizer, prompts, step)
    if accelerator.is_main_process:
        # expect: TRL007
        model(**batch)
        with torch.no_grad():
            # expect: TRL007
            eval_loss = model(**batch).loss
        accelerator.print(f"last batch loss {eval_loss.item():.4f}")
