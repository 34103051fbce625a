"""Supervised fine-tuning with accelerate: scripts/train.sh launches it under DeepSpeed ZeRO-3.
The save is the one of transformers' no_trainer examples, written for every backend but this one."""

import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer

from data import build_dataloader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="Qwen/Qwen2.5-0.5B")
    parser.add_argument("--output_dir", default="outputs")
    parser.add_argument("--lr", type=float, default=1e-5)
    args = parser.parse_args()

    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = build_dataloader(tokenizer)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    model.train()
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 50 == 0:
            accelerator.print(f"step {step}: loss {loss.item():.4f}")

    accelerator.wait_for_everyone()
    unwrapped_model = accelerator.unwrap_model(model)
    # expect: TRL008
    unwrapped_model.save_pretrained(
        args.output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save,
        state_dict=accelerator.get_state_dict(model)
    )
    if accelerator.is_main_process:
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
