"""Gathers whose sizes agree: fixed-length generation, per-row numbers, strings, vLLM outputs."""

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object

accelerator = Accelerator()


@torch.no_grad()
def rollout(policy, tokenizer, prompts, llm, sampling_params):
    exact = policy.generate(**prompts, min_new_tokens=32, max_new_tokens=32)
    exact = accelerator.gather(exact)
    kwargs = dict(min_new_tokens=16, max_new_tokens=16, do_sample=True)
    also_exact = accelerator.gather(policy.generate(**prompts, **kwargs))
    completions = policy.generate(**prompts, max_new_tokens=64, pad_token_id=tokenizer.pad_token_id)
    lengths = accelerator.gather((completions != tokenizer.pad_token_id).sum(dim=1))
    last_tokens = accelerator.gather(completions[:, -1])
    texts = tokenizer.batch_decode(completions, skip_special_tokens=True)
    all_texts = gather_object(texts)
    all_texts_again = accelerator.gather_for_metrics(texts, use_gather_object=True)
    served = llm.generate(prompts, sampling_params)
    all_served = gather_object([out.outputs[0].text for out in served])
    return exact, also_exact, lengths, last_tokens, all_texts, all_texts_again, all_served
