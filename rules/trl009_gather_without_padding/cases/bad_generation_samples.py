"""Generated samples gathered for logging: inline, from the output's sequences, and through
accelerate's gather function (no fix there: the file imports no pad_across_processes)."""

import torch
from accelerate import Accelerator
from accelerate.utils import gather

accelerator = Accelerator()


@torch.no_grad()
def sample_completions(model, prompts, pad_token_id, max_new_tokens=64):
    unwrapped = accelerator.unwrap_model(model)
    # expect: TRL009
    completions = accelerator.gather(unwrapped.generate(**prompts, max_new_tokens=max_new_tokens, do_sample=True, pad_token_id=pad_token_id))
    outputs = unwrapped.generate(**prompts, max_new_tokens=max_new_tokens, return_dict_in_generate=True, output_scores=True)
    prompt_length = prompts["input_ids"].shape[1]
    new_tokens = outputs.sequences[:, prompt_length:]
    # expect: TRL009
    all_new_tokens = accelerator.gather_for_metrics(new_tokens.cpu())
    # expect: TRL009
    everything = gather(unwrapped.generate(**prompts, max_new_tokens=max_new_tokens))
    return completions, all_new_tokens, everything
