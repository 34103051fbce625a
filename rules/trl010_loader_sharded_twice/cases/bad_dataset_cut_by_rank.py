"""Datasets cut by rank before the loader that prepare shards again."""

from accelerate import Accelerator
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.utils.data import DataLoader

accelerator = Accelerator()


def streaming_loader(path, batch_size):
    dataset = load_dataset(path, split="train", streaming=True)
    dataset = split_dataset_by_node(dataset, rank=accelerator.process_index, world_size=accelerator.num_processes)
    # expect: TRL010
    return accelerator.prepare(DataLoader(dataset, batch_size=batch_size))


def sharded_loader(path, batch_size):
    dataset = load_dataset(path, split="train")
    shard = dataset.shard(num_shards=accelerator.num_processes, index=accelerator.process_index)
    # expect: TRL010
    loader = DataLoader(shard, batch_size=batch_size, shuffle=True)
    return accelerator.prepare(loader)


def prompt_loader(prompts, batch_size):
    rank, world_size = accelerator.process_index, accelerator.num_processes
    # expect: TRL010
    loader = DataLoader(prompts[rank::world_size], batch_size=batch_size)
    return accelerator.prepare(loader)
