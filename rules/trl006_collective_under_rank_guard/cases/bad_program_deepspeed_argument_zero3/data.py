"""The instruction data, formatted as prompt and response and tokenized once."""

from datasets import load_dataset

PROMPT = "### Instruction:\n{instruction}\n\n### Response:\n"


def build_dataset(tokenizer, max_length=2048):
    dataset = load_dataset("tatsu-lab/alpaca", split="train")

    def tokenize(example):
        text = PROMPT.format(instruction=example["instruction"]) + example["output"] + tokenizer.eos_token
        tokens = tokenizer(text, truncation=True, max_length=max_length)
        tokens["labels"] = tokens["input_ids"].copy()
        return tokens

    return dataset.map(tokenize, remove_columns=dataset.column_names)
