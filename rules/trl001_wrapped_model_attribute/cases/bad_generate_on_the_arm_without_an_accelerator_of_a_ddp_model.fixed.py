"""The near miss of good_generate_on_the_arm_without_an_accelerator.py: without an accelerator this
script wraps the model in DDP itself, so the arm that has no accelerator reads through the
wrapper, which has no `generate`."""

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from transformers import AutoModelForCausalLM


def rollout(model, tokenizer, prompt, accelerator=None):
    inputs = tokenizer([prompt], return_tensors="pt")
    if accelerator:
        sequences = accelerator.unwrap_model(model).generate(**inputs, max_length=256)
    else:
        # expect: TRL001
        sequences = model.module.generate(**inputs, max_length=256)
    return tokenizer.batch_decode(sequences)


def train(tokenizer, prompts, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = AutoModelForCausalLM.from_pretrained("gpt2").to(local_rank)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    for prompt in prompts:
        completions = rollout(model, tokenizer, prompt)
        loss = model(**tokenizer(completions, return_tensors="pt")).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
