"""Supervised fine-tuning with accelerate; train.sh runs it with DDP, where every rank holds the full weights."""

import argparse

import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

from checkpointing import save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="meta-llama/Llama-3.2-3B")
    parser.add_argument("--output_dir", default="out")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    accelerator = Accelerator(gradient_accumulation_steps=4)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    dataset = load_dataset("HuggingFaceH4/ultrachat_200k", split="train_sft[:2%]")
    dataset = dataset.map(lambda row: tokenizer(row["prompt"], truncation=True, max_length=1024))
    loader = DataLoader(
        dataset.remove_columns(["prompt", "prompt_id", "messages"]),
        batch_size=4,
        collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        if accelerator.is_main_process:
            save_checkpoint(accelerator, model, tokenizer, f"{args.output_dir}/epoch_{epoch}")


if __name__ == "__main__":
    main()
