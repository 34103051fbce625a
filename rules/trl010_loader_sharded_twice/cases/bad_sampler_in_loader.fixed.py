"""A no_trainer script that keeps the DistributedSampler of its torchrun days after moving to accelerate."""

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding


def main(args, train_dataset, eval_dataset, tokenizer):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)
    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)
    train_dataloader = DataLoader(
        train_dataset,
        batch_size=args.per_device_train_batch_size,
        collate_fn=collator,
        # expect: TRL010
        shuffle=True,
    )
    eval_dataloader = DataLoader(
        # expect: TRL010
        eval_dataset, batch_size=args.per_device_eval_batch_size, collate_fn=collator, shuffle=False
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader
    )
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
