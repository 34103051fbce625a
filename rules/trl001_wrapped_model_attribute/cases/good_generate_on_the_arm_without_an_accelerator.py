"""A rollout helper that runs with or without accelerate: with an accelerator it generates from
the unwrapped model, and the other arm, taken only where no accelerator was handed in, reads the
model that no `prepare` wrapped (re-grpo's shape)."""

from accelerate import Accelerator
from transformers import AutoModelForCausalLM, GenerationConfig


def rollout(model, tokenizer, prompt, accelerator=None):
    inputs = tokenizer([prompt], return_tensors="pt")
    config = GenerationConfig(do_sample=True, max_length=256)
    if accelerator:
        sequences = accelerator.unwrap_model(model).generate(**inputs, generation_config=config)
    else:
        sequences = model.generate(**inputs, generation_config=config)
    return tokenizer.batch_decode(sequences)


def score(model, inputs, accelerator=None):
    if accelerator is None:
        return model.generate(**inputs, max_new_tokens=8)
    return accelerator.unwrap_model(model).generate(**inputs, max_new_tokens=8)


def train(tokenizer, prompts, optimizer):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    model, optimizer = accelerator.prepare(model, optimizer)
    for prompt in prompts:
        completions = rollout(model, tokenizer, prompt, accelerator)
        score(model, tokenizer(completions, return_tensors="pt"), accelerator=accelerator)
        loss = model(**tokenizer(completions, return_tensors="pt")).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
