"""Launched with --multi_gpu: DDP wraps the model, and DDP hides config."""

import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer

from data import build_dataloader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="Qwen/Qwen2.5-0.5B")
    parser.add_argument("--sample_every", type=int, default=200)
    args = parser.parse_args()

    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    loader = build_dataloader(tokenizer)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    prompt = tokenizer("The capital of France is", return_tensors="pt").to(accelerator.device)

    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % args.sample_every == 0:
            # expect: TRL001
            vocab = accelerator.unwrap_model(model).config.vocab_size
            accelerator.print(f"step {step}: loss {loss.item():.4f}, perplexity over {vocab} tokens")


if __name__ == "__main__":
    main()
