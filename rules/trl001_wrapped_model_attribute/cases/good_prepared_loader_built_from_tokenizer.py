"""The near miss of bad_prepared_ema_built_around_the_model.py: the tokenizer comes from
from_pretrained like a model, and the dataset and the loader are built around it, but none of
them is a module; accelerate hands a loader back with its own attributes."""

from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoTokenizer

from data import TextDataset


def train(args, model, optimizer):
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    train_dataset = TextDataset(tokenizer, args.train_file, block_size=args.block_size)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    steps_per_epoch = len(train_loader.dataset) // train_loader.total_batch_size
    for epoch in range(args.epochs):
        for step, batch in enumerate(train_loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: {steps_per_epoch} steps")
