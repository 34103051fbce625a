"""Generation under ZeRO-3 done the ways that keep the ranks in step: nothing to flag."""

import deepspeed
import torch
from accelerate import Accelerator, DeepSpeedPlugin
from transformers import AutoModelForCausalLM
from trl.models import unwrap_model_for_generation

accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3))


def log_samples(model, tokenizer, inputs, step):
    # Every rank generates (transformers syncs them under ZeRO-3); rank 0 prints.
    samples = accelerator.unwrap_model(model).generate(**inputs, max_new_tokens=64)
    if accelerator.is_main_process:
        print(step, tokenizer.batch_decode(samples, skip_special_tokens=True)[0])


def sample_with_gathered_weights(model, inputs):
    # TRL gathers the ZeRO-3 weights on every rank first: generation is then rank-local.
    with unwrap_model_for_generation(model, accelerator) as unwrapped_model:
        if accelerator.is_main_process:
            return unwrapped_model.generate(**inputs, max_new_tokens=64)
    return None


def sample_inside_gathered_parameters(engine, inputs):
    with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
        if engine.global_rank == 0:
            engine.module.generate(**inputs, max_new_tokens=8)


def generate_synced(model, inputs):
    unwrapped = accelerator.unwrap_model(model)
    return unwrapped.generate(**inputs, max_new_tokens=256, synced_gpus=True)


def judge_on_main(prompts, tokenizer):
    # A model of its own, never prepared: not sharded, rank 0 may use it alone.
    judge = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct", torch_dtype=torch.bfloat16)
    if accelerator.is_main_process:
        inputs = tokenizer(prompts, return_tensors="pt")
        return judge.generate(**inputs, max_new_tokens=16)
    return None


def evaluate(model, loader):
    model.eval()
    losses = []
    for batch in loader:
        with torch.no_grad():
            losses.append(accelerator.gather_for_metrics(model(**batch).loss.repeat(len(batch["input_ids"]))))
    if accelerator.is_main_process:
        print(torch.cat(losses).mean().item())
