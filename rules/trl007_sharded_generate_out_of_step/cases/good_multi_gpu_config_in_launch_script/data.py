"""The training data: a chat dataset, tokenized and padded per batch."""

from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import DataCollatorForLanguageModeling


def build_dataloader(tokenizer, batch_size=8, max_length=1024):
    dataset = load_dataset("HuggingFaceH4/ultrachat_200k", split="train_sft[:1%]")

    def tokenize(example):
        text = tokenizer.apply_chat_template(example["messages"], tokenize=False)
        return tokenizer(text, truncation=True, max_length=max_length)

    dataset = dataset.map(tokenize, remove_columns=dataset.column_names)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=collator)
