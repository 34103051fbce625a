"""Its only launch is `python evaluate_summaries.py`: one process, where gather returns the tensor as is."""

import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from prompts import ARTICLES


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="google/flan-t5-base")
    args = parser.parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = accelerator.prepare(AutoModelForSeq2SeqLM.from_pretrained(args.model_name))
    inputs = tokenizer(ARTICLES, padding=True, return_tensors="pt").to(accelerator.device)
    with torch.no_grad():
        summaries = accelerator.gather(model.generate(**inputs, max_new_tokens=32))
    print(tokenizer.batch_decode(summaries, skip_special_tokens=True))


if __name__ == "__main__":
    main()
