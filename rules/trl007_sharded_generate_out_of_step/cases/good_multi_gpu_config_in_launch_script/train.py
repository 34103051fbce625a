"""Supervised fine-tuning with accelerate: scripts/train.sh launches it under DDP (MULTI_GPU),
where each rank holds the whole model: rank 0 may generate its samples alone."""

import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer

from data import build_dataloader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="Qwen/Qwen2.5-0.5B")
    parser.add_argument("--output_dir", default="outputs")
    args = parser.parse_args()

    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    loader = build_dataloader(tokenizer)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 200 == 0 and accelerator.is_main_process:
            prompt = tokenizer("The capital of France is", return_tensors="pt").to(accelerator.device)
            sample = accelerator.unwrap_model(model).generate(**prompt, max_new_tokens=16)
            print(step, tokenizer.decode(sample[0], skip_special_tokens=True))


if __name__ == "__main__":
    main()
