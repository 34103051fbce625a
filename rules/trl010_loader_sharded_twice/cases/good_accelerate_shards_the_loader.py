"""The accelerate way: a plain shuffling loader, sharded by prepare alone; samplers over the whole set."""

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, WeightedRandomSampler


def main(args, train_dataset, eval_dataset, collate_fn, weights):
    accelerator = Accelerator()
    model = torch.nn.Linear(16, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=collate_fn, batch_size=args.batch_size)
    eval_dataloader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=args.batch_size)
    balanced = DataLoader(train_dataset, sampler=WeightedRandomSampler(weights, len(weights)), batch_size=8)
    model, optimizer, train_dataloader, eval_dataloader, balanced = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, balanced
    )
    sampler = RandomSampler(train_dataset)
    extra = accelerator.prepare(DataLoader(train_dataset, sampler=sampler, batch_size=4))
    return model, extra
